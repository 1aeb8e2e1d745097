package runner

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"lockbench/chaos"
	"lockbench/check"
	"lockbench/faults"
	"lockbench/results"
)

// addFailovers puts into the result each failover of a replicated cell
// (every kill of its master) with the +switch-master that followed, as
// events too, and the unavailability window: from the kill to the first
// acquire started after it that won the lock, with the acquires that
// failed in it.
func (r *cellRun) addFailovers(run *results.Run, t0 time.Time, events []faults.Event, ck check.Findings, clients []chaos.ClientResult) {
	r.addElections(run, t0, events, ck, clients)
	log, ok := r.targets.Failover.(faults.FailoverLog)
	if !ok {
		return
	}
	for _, sw := range log.Promotions() {
		run.Events = append(run.Events, results.Event{AtSeconds: secondsFrom(t0, sw.At), Kind: "switch_master",
			Target: sw.From + " → " + sw.To, Detail: sw.Detail})
	}
	sort.SliceStable(run.Events, func(i, j int) bool { return run.Events[i].AtSeconds < run.Events[j].AtSeconds })
	if r.s.Service().KillWindow(r.s) == "" { // else a service's own failover: its window is addElections'
		for _, e := range events {
			if e.Kind == "failover" {
				run.Failovers = append(run.Failovers, failoverOf(log, t0, e, ck, clients))
			}
		}
	}
	for i := range run.Failovers {
		promotedLacked(&run.Failovers[i], log, t0, ck.History, r.s.GuardedWrite)
	}
}

// promotedLacked fills in what the node promoted after failover f lacked:
// its promotion's log, and, for guarded writes (kept in the service that
// failed over), the writes acknowledged after the last commit it had and
// sent before the kill (so answered by the old primary: a write cut off by
// the kill has no answer): every lost one is among them (a commit ends
// before its acknowledgement), and none means nothing it could lose.
func promotedLacked(f *results.Failover, log faults.FailoverLog, t0 time.Time, ops []check.Op, guarded bool) {
	killed := t0.Add(time.Duration(f.KilledAt * float64(time.Second)))
	for _, k := range log.PrimaryKills() { // the kill's own time: KilledAt is rounded to the ms
		if d := k.At.Sub(killed); d > -time.Millisecond && d < time.Millisecond {
			killed = k.At
		}
	}
	ps := log.Promotions()
	i := slices.IndexFunc(ps, func(p faults.Promotion) bool { return !p.At.Before(killed) })
	if i < 0 {
		return
	}
	p := ps[i]
	f.LackedBytes = p.Lacked
	if !guarded || p.HadUntil.IsZero() {
		return
	}
	had, past := secondsFrom(t0, p.HadUntil), int64(0)
	for _, op := range ops {
		if op.Outcome == check.Written && op.End > p.HadUntil.UnixNano() && op.Begin < killed.UnixNano() {
			past++
		}
	}
	f.HadUntilS, f.WritesPast = &had, &past
}

// addElections puts into the result each kill or isolation of a consensus
// cluster's leader with its election window, and each kill of a PostgreSQL server
// with its recovery window: from the kill to the first acquire started
// after it that won the lock (a quorum, or the restarted server, served
// again), with the acquires that failed in it.
func (r *cellRun) addElections(run *results.Run, t0 time.Time, events []faults.Event, ck check.Findings, clients []chaos.ClientResult) {
	window := r.s.Service().KillWindow(r.s)
	if window == "" {
		return // a kill opens no window timed here (independent masters)
	}
	for _, e := range events {
		kind := window
		byLeader := strings.HasPrefix(e.Target, "leader")
		if kind == "recovery" && e.Kind == "failover" {
			kind = "failover" // a service's own: its primary killed, a replica promoted
		}
		if !(e.Kind == "crash" && (kind == "recovery" || byLeader) || e.Kind == "failover" && kind == "failover" ||
			e.Kind == "partition" && byLeader && provenCut(events, e)) {
			continue
		}
		f := results.Failover{Kind: kind, KilledAt: secondsFrom(t0, e.At), Master: e.Target, HeldKeys: e.HeldKeys}
		if e.Kind == "partition" {
			f.Cause, f.Master = "partition", strings.TrimSuffix(e.Target, " from the other members")
		}
		end := time.Time{}
		if a, ok := ck.FirstAcquireAfter(e.At.UnixNano()); ok {
			end = time.Unix(0, a.Done)
			at, gone := secondsFrom(t0, end), end.Sub(e.At).Seconds()
			f.FirstAcquireAt, f.Unavailable = &at, &gone
		}
		f.NotAcquired, f.Errors, f.Unconfirmed = failuresBetween(clients, t0, e.At, end)
		run.Failovers = append(run.Failovers, f)
	}
}

// failoverOf is the failover that event e began, as its servers logged
// it.
func failoverOf(log faults.FailoverLog, t0 time.Time, e faults.Event, ck check.Findings, clients []chaos.ClientResult) results.Failover {
	f := results.Failover{KilledAt: secondsFrom(t0, e.At), Master: e.Target, HeldKeys: e.HeldKeys}
	// The kill's own time, not the event's scheduled one; the first acquire
	// of the new master is one started once the old one was reaped (one
	// started a moment before the SIGKILL may still have won there).
	killed, gone := e.At, e.At
	for _, k := range log.PrimaryKills() {
		if !k.At.Before(e.At) {
			killed, gone = k.At, k.At
			if k.Reaped.After(k.At) {
				gone = k.Reaped
			}
			break
		}
	}
	for _, sw := range log.Promotions() {
		if sw.At.After(killed) {
			at := secondsFrom(t0, sw.At)
			f.SwitchAt, f.NewMaster = &at, sw.To
			break
		}
	}
	end := time.Time{}
	if a, ok := ck.FirstAcquireAfter(gone.UnixNano()); ok {
		end = time.Unix(0, a.Done)
		at, gone := secondsFrom(t0, end), end.Sub(killed).Seconds()
		f.FirstAcquireAt, f.Unavailable = &at, &gone
	}
	f.NotAcquired, f.Errors, f.Unconfirmed = failuresBetween(clients, t0, killed, end)
	return f
}

// failuresBetween adds up the clients' failed acquires, by why, in the
// bins from the first that starts at or after from, to the one holding to
// (to zero: to the end): none from before the kill.
func failuresBetween(clients []chaos.ClientResult, t0, from, to time.Time) (notAcquired, errs, unconfirmed int64) {
	lo := int64((from.Sub(t0) + chaos.FailureBin - 1) / chaos.FailureBin)
	hi := int64(math.MaxInt64)
	if !to.IsZero() {
		hi = int64(to.Sub(t0) / chaos.FailureBin)
	}
	for _, c := range clients {
		for bin, n := range c.Failures {
			if bin >= lo && bin <= hi {
				notAcquired += n[results.LostToContention]
				errs += n[results.LostToError]
				unconfirmed += n[results.LostUnconfirmed]
			}
		}
	}
	return notAcquired, errs, unconfirmed
}

func secondsFrom(t0, t time.Time) float64 { return math.Round(t.Sub(t0).Seconds()*1000) / 1000 }

// provenCut: the member partition e began was proven (an isolated event
// for its member): one that still committed began no election.
func provenCut(events []faults.Event, e faults.Event) bool {
	member := strings.TrimSuffix(e.Target, " from the other members")
	return slices.ContainsFunc(events, func(x faults.Event) bool { return x.Kind == "isolated" && x.Target == member })
}
