package runner

import (
	"fmt"
	"time"

	"lockbench/check"
	"lockbench/faults"
	"lockbench/results"
)

// met is what one fault of a cell met: the holds it exercised (-1: a
// fault that takes no lock, such as latency or a replica's lag) and held
// (inside their section at the fault), and when it struck.
type met struct {
	exercised, held int
	at              time.Time
}

// exercised counts, for each fault of the cell that could take a lock
// from its holder, the holds it met (held: inside their section at the
// fault) and of those the holds it exercised (check.ExercisedAtServer
// and ExercisedAtClients define it: the lock could have been handed on
// meanwhile), on the fault's own event time, in the order of the cell's
// faults.
func exercised(ck check.Findings, faultSpecs []results.Fault, clients int, t0, end time.Time, events []faults.Event) []met {
	out := make([]met, len(faultSpecs))
	since := int64(0) // a lagging replica lacks what came after the lag began
	used := map[int]bool{}
	for i, f := range faultSpecs {
		out[i].exercised = -1
		at, ok := faultEventAt(events, f, t0, used)
		out[i].at = at
		switch kind := faultSide(f); {
		case f.Kind == results.FaultReplicationLag && ok:
			since = at.UnixNano()
		case kind == "" || !ok:
		case kind == "server":
			out[i].exercised, out[i].held = ck.ExercisedAtServer(at.UnixNano(), since), ck.HeldAtServer(at.UnixNano(), since)
		default:
			stop := end
			if f.For > 0 {
				stop = at.Add(f.For)
			}
			who := orAllClients(f.Clients, clients)
			out[i].exercised, out[i].held = ck.ExercisedAtClients(at.UnixNano(), stop.UnixNano(), who), ck.HeldAtClients(at.UnixNano(), who)
		}
	}
	return out
}

// exercisedTotals are the cell's exercised counts by fault (-1: takes no
// lock), their sum and the holds met; counted is false when no fault of
// the cell could take a lock.
func exercisedTotals(ms []met) (per []int, total, held int64, counted bool) {
	for _, m := range ms {
		per = append(per, m.exercised)
		if m.exercised >= 0 {
			total, held, counted = total+int64(m.exercised), held+int64(m.held), true
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
