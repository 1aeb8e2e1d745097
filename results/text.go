package results

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteText is a run's human summary: short tables; s are the settings it
// ran on, as given.
func WriteText(w io.Writer, r *Run, s Settings) {
	printRunHeader(w, r, s)
	printRepeats(w, r)
	printLatencies(w, r)
	printOutcomes(w, r)
	printSafety(w, r.Safety)
	printFairness(w, r.Fairness)
	if c := r.Contention; c != nil {
		fmt.Fprintf(w, "contention: %s\n", c.Summary())
	}
	printCosts(w, r)
}

func printRunHeader(w io.Writer, r *Run, s Settings) {
	load := fmt.Sprintf("workers=%d", s.Workers)
	if s.Load == "open" {
		load = fmt.Sprintf("rate=%.0f/s max-in-flight=%d", s.Rate, s.Workers)
	}
	client := fmt.Sprintf("driver=%s mode=%s wait=%s", s.Driver, s.Mode, s.Wait)
	service := r.Config != nil && r.Config.Service != nil
	if service {
		client = "wait-strategy=" + s.WaitStrategy
	}
	if r.Config != nil && r.Config.Adapter != nil { // an external client: its library, not lockbench's driver
		a := r.Config.Adapter
		client = fmt.Sprintf("client=%s %s", a.Library, a.Version)
	}
	ttl := "ttl=" + s.TTL.String()
	if service && r.Config.Service.LeaseTTL == 0 {
		ttl = "no lease"
	}
	fmt.Fprintf(w, "lockbench run: %s, %s %s keys=%d (%s) %s hold=%s, %.1fs measured%s\n",
		topologyText(r, s), client, load, s.Keys, s.Distribution, ttl, s.Hold, r.MeasuredSeconds,
		map[bool]string{true: " (INTERRUPTED)", false: ""}[r.Interrupted])
	fmt.Fprintf(w, "throughput: %.0f cycles/s%s, %.0f acquires/s\n", r.Throughput.CyclesPerSec, spreadSuffix(r, "cycles_per_sec"), r.Throughput.AcquiresPerSec)
	if ol := r.OpenLoop; ol != nil {
		fmt.Fprintf(w, "open loop: offered %.0f/s (%d starts), served %.0f/s (%d), unserved %d, pacer lag p99 %.0f µs%s\n",
			ol.OfferedRate, ol.Offered, ol.ServedRate, ol.Served, ol.Unserved, ol.PacerLag.P99,
			openLoopNote(ol))
	}
	fmt.Fprintln(w)
}

// topologyText is what the lock ran on: "5 masters", "topology single: 1
// master", "topology replicated: 1 master, 2 replicas, 3 sentinels, WAIT 1".
func topologyText(r *Run, s Settings) string {
	n := len(r.Outcomes.PerMaster)
	if n == 0 && r.Config != nil { // a client without per-master outcomes (an adapter's)
		n = r.Config.N()
	}
	masters := fmt.Sprintf("%d masters", n)
	rec := s
	if r.Config != nil {
		rec = r.Config.Settings // as it ran: counts filled in
	}
	if r.Config != nil && r.Config.Service != nil {
		return serviceText(r, rec)
	}
	if len(r.Shards) > 0 {
		return shardsText(r, rec)
	}
	switch rec.Topology {
	case "", "redlock":
		return masters
	case "replicated":
		t := "topology replicated: 1 master"
		if rec.Replicas > 0 {
			t += fmt.Sprintf(", %d replicas, %d sentinels", rec.Replicas, rec.Sentinels)
		}
		return t + fmt.Sprintf(", WAIT %d", rec.WaitReplicas)
	}
	return "topology " + rec.Topology + ": " + masters
}

// shardsText is a sharded cell's servers: "topology cluster: 3 shards
// (3 masters + 3 replicas), WAIT 1".
func shardsText(r *Run, rec Settings) string {
	n := len(r.Shards)
	t := fmt.Sprintf("topology %s: %d shards (%d %s + %d replicas)", rec.Topology, n, n, plural(n, "master", "masters"), n*rec.Replicas)
	if rec.WaitReplicas > 0 {
		t += fmt.Sprintf(", WAIT %d", rec.WaitReplicas)
	}
	return t
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// serviceText is a lock service's servers: "topology etcd 3.4.23: 3
// local members (fsync), lease 10s".
func serviceText(r *Run, rec Settings) string {
	v := r.Config.Service
	t := "topology " + rec.Topology
	if r.Config.ServerVersion != "" {
		t = "topology " + r.Config.ServerVersion
	}
	t += ": " + v.Servers
	if rec.MemberLatency > 0 {
		t += fmt.Sprintf(", member links +%s", rec.MemberLatency)
	}
	if v.Lease != "" {
		t += ", " + v.Lease
	}
	return t
}

func printLatencies(w io.Writer, r *Run) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "latency µs"
	if r.Repeats != nil {
		head = "latency µs (percentiles: medians of the repeats)"
	}
	fmt.Fprintln(tw, head+"\tcount\tp50\tp90\tp99\tp99.9\tmax\tmean\t")
	type row struct {
		name string
		l    Latency
	}
	rows := []row{{"acquire ok", r.AcquireLatency}}
	if r.AcquireUncorrected != nil {
		rows = append(rows, row{"(uncorrected)", *r.AcquireUncorrected})
	}
	rows = append(rows, row{"acquire failed", r.AcquireFailedLatency}, row{"release", r.ReleaseLatency})
	if c := r.Contention; c != nil {
		rows = append(rows, row{"time to lock", c.TimeToLock})
		if c.GaveUpWait != nil {
			rows = append(rows, row{"gave up after", *c.GaveUpWait})
		}
		if c.HandoffGap != nil {
			rows = append(rows, row{"handoff gap", *c.HandoffGap})
		}
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", row.name, row.l.Count,
			row.l.P50, row.l.P90, row.l.P99, row.l.P999, row.l.Max, row.l.Mean)
	}
	tw.Flush()
}

func printOutcomes(w io.Writer, r *Run) {
	o := r.Outcomes
	waited := o.Unconfirmed > 0 || (r.Config != nil && r.Config.WaitReplicas > 0)
	fmt.Fprintf(w, "\noutcomes: %d acquired, %d not acquired, %d errors", o.Acquired, o.NotAcquired, o.Errors)
	fewHead := ""
	if waited {
		fmt.Fprintf(w, ", %d few acks (fewer replicas acknowledged the grant than asked for)", o.Unconfirmed)
		fewHead = "few acks\t"
	}
	fmt.Fprintln(w)
	if len(o.PerMaster) == 0 { // a service without per-server outcomes
		printServiceCalls(w, r)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "master\tsent\tok\ttaken\ttimeout\terror\t"+fewHead+"pending\tnot sent\tlate\tlate released\tSET rtt p50 µs\t")
	for _, m := range sortedMasters(o.PerMaster) {
		pm := o.PerMaster[m]
		few := ""
		if waited {
			few = fmt.Sprintf("%d\t", pm.Unconfirmed)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s%d\t%d\t%d\t%d\t%.0f\t\n", m, pm.Sent(), pm.OK, pm.Taken, pm.Timeout, pm.Error,
			few, pm.Pending, pm.NotSent, pm.Late, pm.LateReleased, r.BaselineRTT[m].P50)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// printServiceCalls is what a service without per-server outcomes says
// of its calls.
func printServiceCalls(w io.Writer, r *Run) {
	if r.Config == nil || r.Config.Service == nil {
		return
	}
	v := r.Config.Service
	said := []string{"calls not counted"} // what a service's client does not say is not shown as zero
	if v.Calls != "" {
		said[0] = fmt.Sprintf("%.2f %s per cycle", v.CallsPerCycle, v.Calls)
	}
	if v.Sessions != "" {
		said = append(said, fmt.Sprintf("%d %s lost", v.Lost, v.Sessions))
	}
	if v.FenceSource != "" {
		said = append(said, "fencing token: "+v.FenceSource)
	}
	fmt.Fprintf(w, "%s: %s\n\n", r.Config.Topology, strings.Join(said, ", "))
}

// adapterPart shows an external client's CPU apart: lockbench's and
// its adapter's ("" without an adapter).
func adapterPart(c Client) string {
	if !c.IncludesAdapter {
		return ""
	}
	return fmt.Sprintf(" (lockbench %.1f + adapter %.1f)", c.LockbenchCPUMicrosCycle, c.AdapterCPUMicrosCycle)
}

// printCosts says what the run cost the client, the servers and the
// machine, and which of them limited it.
func printCosts(w io.Writer, r *Run) {
	c := r.Client
	fmt.Fprintf(w, "client: %.2f CPU s, %.1f CPU µs/cycle%s, %.0f%% of %d cores\n",
		c.CPUSeconds, c.CPUMicrosCycle, adapterPart(c), 100*c.CPUShare, c.Cores)
	if r.Servers != nil {
		sv := r.Servers
		server := "master"
		switch {
		case r.Config != nil && r.Config.Service != nil:
			server = r.Config.Service.Server
		case len(r.Shards) > 0:
			server = "shard"
		}
		fmt.Fprintf(w, "servers: %.2f CPU s, %.1f CPU µs/cycle, busiest %s %.0f%% of one core", sv.CPUSeconds, sv.CPUMicrosCycle, server, 100*sv.BusiestShare)
		if sv.TopologyCPUMicrosCycle > 0 {
			fmt.Fprintf(w, "; with the replicas (%.2f CPU s)%s %.1f CPU µs/cycle", sv.ReplicaCPUSeconds, monitorsText(sv), sv.TopologyCPUMicrosCycle)
		}
		fmt.Fprintln(w)
	}
	if m := r.Machine; m != nil {
		fmt.Fprintf(w, "machine: %d cores %.0f%% busy: lockbench %s, servers %.0f%%, other %.0f%%, steal %.0f%%\n",
			m.Cores, 100*(m.BusyShare+m.StealShare), ClientShareText(m), 100*m.ServersShare, 100*m.OtherShare, 100*m.StealShare)
	}
	if c := r.CommandCost; c != nil {
		costliest, core := "the costliest master", "one core"
		if len(r.Shards) > 0 { // its cycles are all shards': the busiest shard's core sets their pace
			costliest, core = "the busiest shard", "its core full"
		}
		fmt.Fprintf(w, "server cost: %.1f µs of commands per cycle on %s (%s: %.0f cycles/s)", c.CommandMicrosCycle, costliest, core, c.ProjectedRate)
		if c.CPUMicrosCycle > 0 {
			fmt.Fprintf(w, ", %.1f µs of its CPU (%s: %.0f cycles/s)", c.CPUMicrosCycle, core, c.ProjectedRateCPU)
		}
		fmt.Fprintf(w, "; measured %.0f cycles/s\n", c.MeasuredRate)
	}
	printShards(w, r)
	if l := r.Limit; l != nil {
		fmt.Fprintf(w, "limited by: %s (%s)\n", l.By, l.Evidence)
	}
}

// monitorsText is the monitors' CPU beside the replicas' (Redis'
// Sentinels); "" when none was read (a topology without them).
func monitorsText(sv *Servers) string {
	if sv.MonitorCPUSeconds <= 0 {
		return ""
	}
	return fmt.Sprintf(" and monitors (%.2f CPU s)", sv.MonitorCPUSeconds)
}

// spreadSuffix is " ± 3.1% (median of 5)" for a figure of a repeated run.
func spreadSuffix(r *Run, figure string) string {
	if r.Repeats == nil {
		return ""
	}
	sp := r.Repeats.Spread[figure]
	return fmt.Sprintf(" ± %s (median of %d)", SpreadText(sp), sp.N)
}

// printRepeats is the spread table of a repeated run: the headline figures
// are its medians.
func printRepeats(w io.Writer, r *Run) {
	if r.Repeats == nil {
		return
	}
	fmt.Fprintf(w, "repeats: %d; headline figures are medians; ± is the larger side of the %s\n", r.Repeats.Count, CIText(r.Repeats))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "figure\tmedian\t±\tmin\tmax\t")
	for _, rr := range r.Repeats.Runs {
		fmt.Fprintf(tw, "#%d\t", rr.Repeat)
	}
	fmt.Fprintln(tw)
	for _, f := range Figures {
		if f.Fault && !r.Safety.ResourceChecked {
			continue // a benchmark's repeats judge no safety
		}
		sp := r.Repeats.Spread[f.Name]
		name := f.Text
		if f.Micros {
			name += " µs"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t", name, Sig3(sp.Median), SpreadText(sp), Sig3(sp.Min), Sig3(sp.Max))
		for _, v := range Samples(Run{Repeats: &Repeats{Runs: r.Repeats.Runs}}, f) {
			fmt.Fprintf(tw, "%s\t", Sig3(v))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// openLoopNote says who left offered starts unserved.
func openLoopNote(ol *OpenLoop) string {
	switch {
	case ol.Overloaded:
		return "  OVERLOADED: the lock could not keep up"
	case ol.Unserved > 0:
		return "  (unserved: lockbench was late, see warnings)"
	}
	return ""
}

// printSafety never shows a green 0 when the probe judged nothing.
func printSafety(w io.Writer, sf Safety) {
	if sf.NotJudged != "" {
		fmt.Fprintf(w, "safety: not judged (%s)\n", sf.NotJudged)
		return
	}
	if sf.ViolationsInPromise != nil { // a fault cell's checker: holds as used, the promise second
		fmt.Fprintf(w, "safety: %d violations (holds overlapping as used; %d within their validity windows) in %d holds", sf.Violations, *sf.ViolationsInPromise, sf.JudgedHolds)
	} else {
		fmt.Fprintf(w, "safety: %d violations in %d holds judged on their validity windows", sf.Violations, sf.JudgedHolds)
	}
	if sf.HoldsNotJudged > 0 {
		fmt.Fprintf(w, " (%d not judged: validity ran out before use)", sf.HoldsNotJudged)
	}
	fmt.Fprintf(w, ", max %d concurrent holders of one key\n", sf.MaxConcurrentHolder)
	if u := sf.Unavailable; u != nil {
		fmt.Fprintf(w, "unavailable: %s after the %s at %.3f s (the longest span with no acquire won)\n", u.Text(), u.After, u.AtS)
	}
}

func sortedMasters(m map[string]MasterOutcomes) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printFairness says how evenly the workers got the lock.
func printFairness(w io.Writer, f *Fairness) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "fairness: Jain's index %.3f over %d workers (acquisitions per worker %d–%d", f.JainIndex, f.Workers, f.MinAcquired, f.MaxAcquired)
	if f.Idle > 0 {
		fmt.Fprintf(w, ", %d acquired nothing", f.Idle)
	}
	fmt.Fprintln(w, ")")
}
