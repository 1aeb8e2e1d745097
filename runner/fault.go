package runner

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"lockbench/chaos"
	"lockbench/check"
	"lockbench/faults"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/service"
)

// findTargets lists what the cell's faults may act on (its servers, their
// links, its clients once started) and every address the cell listens on.
func (r *cellRun) findTargets() {
	m := r.servers
	r.targets = faults.Targets{Net: m.Net}
	r.res.Addrs = append(slices.Clone(m.Service.Targets(r.cell, &r.targets)), m.Resource)
	for c := range r.s.Clients {
		if m.Net != nil {
			r.res.Addrs = append(r.res.Addrs, m.Net.Addrs(c)...)
		}
	}
}

// hasFailover says the cell kills a replicated set's master.
func (r *cellRun) hasFailover() bool {
	return slices.ContainsFunc(r.cell.Faults, func(f results.Fault) bool {
		return f.Kind == results.FaultFailover || f.Role == "leader"
	})
}

// logStarted records the servers' pids and says what runs where.
func (r *cellRun) logStarted() {
	m := r.servers
	r.res.Pids = append(r.res.Pids, m.Pids()...)
	logf(r.opt.Log, "chaos: cell %s: %s, resource %s (pid %d), %d %s clients%s",
		r.cell.Name, m.Describe(), m.Resource, m.ResourcePid(), r.s.Clients, r.s.ClientMode, clientPids(r.clients))
}

// judgeHistory asks the outside judge (porcupine) whether the resource's
// history is linearizable, writes the failing key's history beside the
// cell's result, and says where the judge and the resource's counters
// disagree. An interrupted cell's history is partial: it is not judged.
func (r *cellRun) judgeHistory(run *results.Run, ck check.Findings, interrupted bool) {
	lin := &results.Linearizability{Verdict: check.UnknownVerdict, Operations: len(ck.History), Reason: "the cell was interrupted: its history is partial"}
	if !interrupted {
		// The budget: the cell's own length, 10 s at least. The final read
		// of every key closes the history, after every section.
		ops := append(slices.Clip(ck.History), check.FinalOps(ck.History, ck.Final, lastEnd(ck.History)+1)...)
		j := check.CheckLinearizable(ops, max(10*time.Second, time.Duration(r.s.Duration)))
		if err := r.visualize(j); err != nil {
			run.Warnings = append(run.Warnings, "linearizability: the failing key's history could not be drawn: "+err.Error())
		}
		lin = &j.Linearizability
	}
	run.Safety.Linearizability = lin
	if mc := r.metricsCell(); mc != nil {
		mc.SetLinearizable(lin.Verdict)
	}
	switch {
	case lin.Verdict == check.NotLinearizable:
		run.Warnings = append(run.Warnings, fmt.Sprintf("safety: the history of key %d is not linearizable (porcupine)%s", *lin.Key, seeFile(lin.Visualization)))
	case lin.Verdict == check.UnknownVerdict && !interrupted:
		run.Warnings = append(run.Warnings, "safety: linearizability unknown: "+lin.Reason)
	}
	run.Safety.Disagreement = disagreement(lin, ck.LostUpdates+ck.StaleAccepted)
}

// lastEnd is when the last answered section ended (Unix ns).
func lastEnd(ops []check.Op) int64 {
	var end int64
	for _, op := range ops {
		if op.End != check.OpenEnd {
			end = max(end, op.End, op.Begin)
		} else {
			end = max(end, op.Begin)
		}
	}
	return end
}

// visualize writes porcupine's page of the failing key's history as
// cells/STEM.linearizability.html (nothing without a results directory,
// or when no key failed).
func (r *cellRun) visualize(j *check.Judgement) error {
	if r.dir == "" || !j.Failing() {
		return nil
	}
	rel := filepath.Join("cells", r.stem+".linearizability.html")
	if err := results.WriteFileShared(filepath.Join(r.dir, rel), func(w io.Writer) error {
		_, err := j.Visualize(w)
		return err
	}); err != nil {
		return err
	}
	j.Visualization = rel
	return nil
}

// disagreement is how the history check's lost and stale writes and
// porcupine's verdict contradict each other ("" : they agree, or the judge
// could not say): both judge the same sections and final reads, so a lost
// or stale write is one no order of the sections explains.
func disagreement(lin *results.Linearizability, bad int64) string {
	switch {
	case lin.Verdict == check.Linearizable && bad > 0 && lin.Unanswered > 0:
		return fmt.Sprintf("the final histories show %d lost or stale writes, but porcupine found the history linearizable: "+
			"%d writes got no answer, and porcupine may let one land anywhere after its read", bad, lin.Unanswered)
	case lin.Verdict == check.Linearizable && bad > 0:
		return fmt.Sprintf("the final histories show %d lost or stale writes, but porcupine found the history linearizable", bad)
	case lin.Verdict == check.NotLinearizable && bad == 0:
		return fmt.Sprintf("porcupine found key %d's history not linearizable, but the final histories show no lost or stale write", *lin.Key)
	}
	return ""
}

func seeFile(rel string) string {
	if rel == "" {
		return ""
	}
	return ": see " + rel
}

// notJudged lists why a finished fault cell showed nothing whatever its
// figures say: a scheduled fault that did not happen, too few acquisitions
// or acknowledged writes to judge, holds the checker did not see, or a
// crash of a master that held no lock (nothing for it to forget).
func notJudged(cell plan.Cell, r *CellResult, ck check.Findings, missed []faults.Spec, events []faults.Event) []string {
	var out []string
	// In a history of several events, one that did not happen or met no
	// lock is an event not judged (it opens none, or counts in no k of
	// n), not a cell that judged nothing: its other events stand.
	perEvent := judgedEvents(r.Run.Safety.FaultEvents) > 0 && len(r.Run.Safety.FaultEvents) > 1
	for _, f := range missed {
		if !perEvent {
			out = append(out, fmt.Sprintf("scheduled fault %q did not happen", f))
		}
	}
	if lin := r.Run.Safety.Linearizability; lin != nil && lin.Verdict == check.UnknownVerdict {
		out = append(out, "linearizability unknown: "+lin.Reason)
	}
	minimum, acquired := cell.Settings.MinAcquisitions, r.Run.Outcomes.Acquired
	if acquired < minimum {
		out = append(out, fmt.Sprintf("%d acquisitions, fewer than min_acquisitions %d", acquired, minimum))
	}
	if ck.Acks < minimum {
		out = append(out, fmt.Sprintf("%d acknowledged writes, fewer than min_acquisitions %d", ck.Acks, minimum))
	}
	if ck.Holds != acquired {
		out = append(out, fmt.Sprintf("the checker saw %d holds for %d acquisitions", ck.Holds, acquired))
	}
	for _, e := range events {
		switch {
		case e.Kind != "crash" && e.Kind != "failover" || perEvent:
		case e.NoKeys: // a monitor (Redis' Sentinel) holds no keys
		case e.HeldKeys == 0:
			out = append(out, fmt.Sprintf("the crash of %s hit a master that held no lock key", e.Target))
		case e.HeldKeys < 0:
			out = append(out, fmt.Sprintf("the crash of %s: the lock keys it held could not be counted", e.Target))
		case e.Kind == "failover" && ck.HeldAt(e.At.UnixNano()) == 0:
			out = append(out, fmt.Sprintf("no granted lock was still valid at the failover of %s: nothing for it to lose", e.Target))
		}
	}
	for _, f := range r.Run.Failovers {
		switch {
		case f.Kind == "" && f.SwitchAt == nil:
			out = append(out, fmt.Sprintf("the failover of %s: no replica was promoted", f.Master))
		case f.FirstAcquireAt == nil:
			out = append(out, fmt.Sprintf("the %s of %s: no acquire won after it", orFailover(f.Kind), f.Master))
		}
	}
	return out
}

func orFailover(kind string) string {
	if kind == "" {
		return "failover"
	}
	return kind
}

// clientPids lists the client processes the cell started, if any.
func clientPids(cs []chaos.Client) string {
	var p []int
	for _, c := range cs {
		if pid := c.Pid(); pid != 0 {
			p = append(p, pid)
		}
	}
	if len(p) == 0 {
		return ""
	}
	return " (pids " + service.PidList(p) + ")"
}

// judgedEvents counts the fault events judged.
func judgedEvents(evs []results.FaultEvent) int {
	n := 0
	for _, e := range evs {
		if e.Judged {
			n++
		}
	}
	return n
}
