package report

import (
	"encoding/csv"
	"io"
	"lockbench/results"
	"strconv"
)

// csvHeader is cells.csv's header: identity, the swept axes, then figures
// (latencies are of successful acquires, in µs).
func csvHeader(axes []string) []string {
	h := []string{"index", "id", "label"}
	h = append(h, axes...)
	return append(h, "cycles_per_sec", "acquires_per_sec",
		"p50_us", "p90_us", "p99_us", "p999_us", "max_us",
		"acquired", "not_acquired", "errors", "success_ratio", "violations",
		"client_cpu_us_per_cycle", "client_bound",
		// Added with repeats: the spread of the medians above.
		"repeats", "cycles_per_sec_min", "cycles_per_sec_max", "cycles_per_sec_rel_spread",
		"p99_us_min", "p99_us_max", "p99_rel_spread",
		"limit", "machine_busy_share", "client_share", "servers_share", "busiest_master_core_share",
		csvCommandCostColumn, csvCPUCostColumn, "projected_rate", "fsync_share_p50",
		// An external client's adapter's part of client_cpu_us_per_cycle.
		"adapter_cpu_us_per_cycle")
}

func writeCSV(path string, s *Summary) error {
	return results.WriteFileShared(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(csvHeader(s.Axes)); err != nil {
			return err
		}
		f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
		i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
		for _, c := range s.Cells {
			row := []string{strconv.Itoa(c.Index), c.ID, c.Label}
			for _, a := range s.Axes {
				row = append(row, c.Axes[a])
			}
			row = append(row, f(c.CyclesPerSec, 1), f(c.AcquiresPerSec, 1),
				f(c.Acquire.P50, 0), f(c.Acquire.P90, 0), f(c.Acquire.P99, 0), f(c.Acquire.P999, 0), f(c.Acquire.Max, 0),
				i64(c.Acquired), i64(c.NotAcquired), i64(c.Errors), f(c.SuccessRatio, 6), i64(c.Violations),
				f(c.ClientCPUPerCycle, 2), strconv.FormatBool(c.ClientBound))
			row = append(row, spreadColumns(c.Repeats)...)
			row = append(row, costColumns(c, f)...)
			row = append(row, adapterColumn(c, f))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

func writeSummaryJSON(path string, s *Summary) error {
	return results.WriteFileShared(path, func(w io.Writer) error { return results.WriteJSON(w, s) })
}

// spreadColumns are cells.csv's repeat columns; a cell measured once has
// one repeat and no spread.
func spreadColumns(r *results.Repeats) []string {
	if r == nil {
		return []string{"1", "", "", "", "", "", ""}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	t, p := r.Spread["cycles_per_sec"], r.Spread["acquire_p99"]
	return []string{strconv.Itoa(r.Count), f(t.Min), f(t.Max), f(t.RelSpread), f(p.Min), f(p.Max), f(p.RelSpread)}
}

// costColumns are the verdict, machine split and server cost; empty where
// the result did not measure them.
func costColumns(c CellSummary, f func(float64, int) string) []string {
	out := make([]string, 9)
	if c.Limit != nil {
		out[0] = c.Limit.By
	}
	if m := c.Machine; m != nil {
		out[1], out[2], out[3] = f(m.BusyShare+m.StealShare, 3), f(m.ClientShare, 3), f(m.ServersShare, 3)
	}
	if b, ok := results.BusiestMaster(&results.Run{Machine: c.Machine, Servers: &results.Servers{BusiestShare: c.ServerBusiestShare}}); ok {
		out[4] = f(b, 3)
	}
	if rc := c.CommandCost; rc != nil {
		out[5], out[6] = f(rc.CommandMicrosCycle, 2), f(rc.CPUMicrosCycle, 2)
		p, _ := projection(rc)
		out[7] = f(p, 0)
	}
	if c.FsyncShareP50 != nil {
		out[8] = f(*c.FsyncShareP50, 3)
	}
	return out
}

// adapterColumn is an external client's adapter CPU per cycle ("": none).
func adapterColumn(c CellSummary, f func(float64, int) string) string {
	if c.AdapterCPUPerCycle == nil {
		return ""
	}
	return f(*c.AdapterCPUPerCycle, 2)
}
