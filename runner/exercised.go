package runner

import (
	"fmt"
	"time"

	"lockbench/check"
	"lockbench/faults"
	"lockbench/results"
)

// exercised counts, for each fault of the cell that could take a lock
// from its holder, the holds it met (held: inside their section at the
// fault) and of those the holds it exercised (check.ExercisedAtServer
// and ExercisedAtClients define it: the lock could have been handed on
// meanwhile), on the fault's own event time. per holds the exercised
// counts in the order of the cell's faults (-1: a fault that takes no
// lock, such as latency or a replica's lag); counted is false when no
// fault of the cell could take a lock.
func exercised(ck check.Findings, faultSpecs []results.Fault, clients int, t0, end time.Time, events []faults.Event) (per []int, total, held int64, counted bool) {
	per = make([]int, len(faultSpecs))
	since := int64(0) // a lagging replica lacks what came after the lag began
	used := map[int]bool{}
	for i, f := range faultSpecs {
		per[i] = -1
		at, ok := faultEventAt(events, f, t0, used)
		switch kind := faultSide(f); {
		case f.Kind == results.FaultReplicationLag && ok:
			since = at.UnixNano()
		case kind == "" || !ok:
		case kind == "server":
			per[i], held = ck.ExercisedAtServer(at.UnixNano(), since), held+int64(ck.HeldAtServer(at.UnixNano(), since))
		default:
			stop := end
			if f.For > 0 {
				stop = at.Add(f.For)
			}
			who := orAllClients(f.Clients, clients)
			per[i], held = ck.ExercisedAtClients(at.UnixNano(), stop.UnixNano(), who), held+int64(ck.HeldAtClients(at.UnixNano(), who))
		}
		if per[i] >= 0 {
			total, counted = total+int64(per[i]), true
		}
	}
	return per, total, held, counted
}

// faultSide says where a fault strikes a lock: "server" (a crash, a
// failover, a clock jump, a backend killed, a server paused or cut from
// its peers), "clients" (a client process paused or partitioned), or ""
// for a fault that takes no lock (latency, a reset, a replica's lag, a
// crash of replicas or Sentinels only).
func faultSide(f results.Fault) string {
	switch f.Kind {
	case results.FaultCrash:
		if len(f.Masters) == 0 && f.Role == "" && (len(f.Replicas) > 0 || len(f.Sentinels) > 0) {
			return ""
		}
		return "server"
	case results.FaultFailover, results.FaultClockJump, results.FaultKillBackend:
		return "server"
	case results.FaultPause:
		if len(f.Masters) > 0 || f.Role != "" {
			return "server"
		}
		return "clients"
	case results.FaultPartition:
		if f.Link == results.LinkMembers {
			return "server"
		}
		return "clients"
	}
	return ""
}

// faultEventAt is when fault f happened: its kind's first event at or after its
// scheduled time (less a little: the schedule's own clock) not taken by an
// earlier fault of the cell.
func faultEventAt(events []faults.Event, f results.Fault, t0 time.Time, used map[int]bool) (time.Time, bool) {
	due := t0.Add(f.At - 50*time.Millisecond)
	for i, e := range events {
		if !used[i] && e.Kind == string(f.Kind) && !e.At.Before(due) {
			used[i] = true
			return e.At, true
		}
	}
	return time.Time{}, false
}

// orAllClients is the clients a fault names, or every client when it names
// none.
func orAllClients(named []int, n int) []int {
	if len(named) > 0 {
		return named
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// notExercisedText says why a cell judged nothing about exclusion.
func notExercisedText(per []int) string {
	return fmt.Sprintf("not exercised: no hold was inside its critical section when a fault (%s) could hand its lock on", faultCounts(per))
}

func faultCounts(per []int) string {
	s := ""
	for i, n := range per {
		if n < 0 {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("fault %d: %d holds", i+1, n)
	}
	return s
}
