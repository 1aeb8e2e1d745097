package report

import (
	"encoding/json"
	"fmt"
	"io"
	"lockbench/results"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// synthCell describes one synthetic cell: latencies are log-normal around
// MedianUs with spread Sigma, PerSec successful acquires per second.
type synthCell struct {
	Index       int
	Axes        map[string]string
	Config      map[string]any
	MedianUs    float64
	Sigma       float64
	PerSec      int
	Seconds     int
	FailedPerS  int
	Violations  int64
	ClientShare float64
	ClientBound bool
	Events      []results.Event
	// Slow seconds [from, to) run at a tenth of the rate and ten times
	// the latency: a fault.
	SlowFrom, SlowTo int
	Seed             uint64
	// Repeats > 1 makes the cell a repeated one: its repeats are the
	// measured figures times a log-normal noise of sd RepeatNoise.
	Repeats     int
	RepeatNoise float64
	// Machine and CommandCost go into the result as written.
	Machine     *results.CPUSplit
	CommandCost *results.CommandCost
}

func (c synthCell) id() string {
	keys := make([]string, 0, len(c.Axes))
	for k := range c.Axes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+c.Axes[k])
	}
	return fmt.Sprintf("%03d-%s", c.Index, strings.Join(parts, ","))
}

func (c synthCell) label() string {
	var parts []string
	for _, k := range sortedAxes(keysOf(c.Axes)) {
		parts = append(parts, k+"="+c.Axes[k])
	}
	return strings.Join(parts, " ")
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// synthSamples draws the latencies (µs) of one second.
func (c synthCell) second(rng *rand.Rand, sec int, median float64, n int) []int64 {
	slow := sec >= c.SlowFrom && sec < c.SlowTo
	if slow {
		n /= 10
		median *= 10
	}
	out := make([]int64, n)
	for i := range out {
		v := median * math.Exp(c.Sigma*rng.NormFloat64())
		out[i] = int64(math.Max(1, math.Min(v, results.MaxMicros)))
	}
	return out
}

// writeSynthDir writes a results directory like `lockbench sweep` does:
// the manifest, cell JSONs and HdrHistogram interval logs written with
// hdrhistogram-go's log writer. It returns every acquire sample per cell ID.
func writeSynthDir(t testing.TB, dir string, name string, cells []synthCell) map[string][]int64 {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "cells"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 11, 30, 10, 0, 0, 0, time.UTC)
	man := results.Manifest{Name: name, Description: "synthetic results for tests", LockbenchVersion: "test", GoVersion: "go1.26",
		ServerVersions: []string{"redis-server 7.2.4"}, Machine: results.Machine{Hostname: "test-host", OS: "linux", Arch: "amd64", Cores: 8},
		StartedAt: start, FinishedAt: start.Add(time.Hour)}
	samples := map[string][]int64{}
	for _, c := range cells {
		id := c.id()
		info := results.CellInfo{Index: c.Index, ID: id, Label: c.label(), Axes: c.Axes, File: "cells/" + id + ".json"}
		man.Cells = append(man.Cells, info)
		rng := rand.New(rand.NewPCG(c.Seed, uint64(c.Index)+1))
		cellStart := start.Add(time.Duration(c.Index) * time.Minute).UnixMilli()
		logs := map[string][]*hdrhistogram.Histogram{}
		open := c.Config["load"] == "open"
		for sec := 0; sec < c.Seconds; sec++ {
			stamp := func(h *hdrhistogram.Histogram, tag string) *hdrhistogram.Histogram {
				h.SetStartTimeMs(cellStart + int64(sec)*1000)
				h.SetEndTimeMs(cellStart + int64(sec+1)*1000)
				h.SetTag(tag)
				return h
			}
			acq, unc, rel, fail := results.NewHistogram(), results.NewHistogram(), results.NewHistogram(), results.NewHistogram()
			for _, v := range c.second(rng, sec, c.MedianUs, c.PerSec) {
				_ = acq.RecordValue(v)
				_ = unc.RecordValue(max(1, v*9/10))
				_ = rel.RecordValue(max(1, v*8/10))
				samples[id] = append(samples[id], v)
			}
			for _, v := range c.second(rng, sec, c.MedianUs*1.5, c.FailedPerS) {
				_ = fail.RecordValue(v)
			}
			logs[results.MetricAcquire] = append(logs[results.MetricAcquire], stamp(acq, results.MetricAcquire))
			logs[results.MetricRelease] = append(logs[results.MetricRelease], stamp(rel, results.MetricRelease))
			logs[results.MetricFailed] = append(logs[results.MetricFailed], stamp(fail, results.MetricFailed))
			if open {
				logs[results.MetricAcquireUncorrected] = append(logs[results.MetricAcquireUncorrected], stamp(unc, results.MetricAcquireUncorrected))
			}
		}
		if c.Repeats > 1 {
			writeSynthRepeatLogs(t, dir, id, c.Repeats, logs)
		}
		for m, ivs := range logs {
			f, err := os.Create(results.LogPath(dir, info, m))
			if err != nil {
				t.Fatal(err)
			}
			lw := hdrhistogram.NewHistogramLogWriter(f)
			must(t, lw.OutputLogFormatVersion())
			must(t, lw.OutputStartTime(cellStart))
			must(t, lw.OutputLegend())
			for _, h := range ivs {
				must(t, lw.OutputIntervalHistogram(h))
			}
			must(t, f.Close())
		}
		totals := map[string]*hdrhistogram.Histogram{}
		for m, ivs := range logs {
			totals[m], _ = results.Total(ivs)
		}
		acquired := totals[results.MetricAcquire].TotalCount()
		failed := totals[results.MetricFailed].TotalCount()
		secs := float64(c.Seconds)
		run := results.Run{
			Config:               configOf(t, c.Config),
			Throughput:           results.Throughput{CyclesPerSec: float64(acquired) / secs, AcquiresPerSec: float64(acquired+failed) / secs},
			AcquireLatency:       results.Summarize(totals[results.MetricAcquire]),
			AcquireFailedLatency: results.Summarize(totals[results.MetricFailed]),
			ReleaseLatency:       results.Summarize(totals[results.MetricRelease]),
			Outcomes: results.Outcomes{Tally: results.Tally{Acquired: acquired, NotAcquired: failed}, PerMaster: map[string]results.MasterOutcomes{
				"127.0.0.1:7001": {OK: acquired, Taken: failed}, "127.0.0.1:7002": {OK: acquired, Taken: failed},
				"127.0.0.1:7003": {OK: acquired + failed/2, Taken: failed / 2},
			}},
			Safety:          results.Safety{Violations: c.Violations, MaxConcurrentHolder: 1},
			Client:          results.Client{CPUSeconds: c.ClientShare * 8 * secs, CPUMicrosCycle: c.ClientShare * 8 * 1e6 / max(1, float64(acquired)/secs), CPUShare: c.ClientShare, Cores: 8, ClientBound: c.ClientBound},
			Servers:         &results.Servers{CPUSeconds: 2, BusiestShare: 0.4},
			MeasuredSeconds: secs,
			StartedAt:       time.UnixMilli(cellStart).UTC(),
			Cell:            &info,
			Events:          c.Events,
			Machine:         c.Machine,
			CommandCost:     c.CommandCost,
		}
		if open {
			u := results.Summarize(totals[results.MetricAcquireUncorrected])
			run.AcquireUncorrected = &u
		}
		if c.Repeats > 1 {
			run = synthRepeats(c, run)
			run.Cell = &info
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, info.File), func(w io.Writer) error { return results.WriteJSON(w, run) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "manifest.json"), func(w io.Writer) error { return results.WriteJSON(w, man) }); err != nil {
		t.Fatal(err)
	}
	return samples
}

// writeSynthRepeatLogs writes each repeat's own logs as a sweep does: the
// cell's seconds split evenly among its repeats.
func writeSynthRepeatLogs(t testing.TB, dir, id string, n int, logs map[string][]*hdrhistogram.Histogram) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(dir, "cells", "repeats"), 0o755))
	for m, ivs := range logs {
		per := len(ivs) / n
		for k := 1; k <= n; k++ {
			f, err := os.Create(results.RepeatLogPath(dir, id, k, m))
			must(t, err)
			must(t, results.WriteIntervalLog(f, m, ivs[(k-1)*per:k*per]))
			must(t, f.Close())
		}
	}
}

// synthRepeats splits a cell's measurement into c.Repeats repeats whose
// throughput (and inversely latency) carries log-normal noise.
func synthRepeats(c synthCell, run results.Run) results.Run {
	rng := rand.New(rand.NewPCG(c.Seed, 99+uint64(c.Index)))
	n := int64(c.Repeats)
	scale := func(l results.Latency, f float64) results.Latency {
		l.P50, l.P90, l.P99, l.P999, l.Mean = l.P50*f, l.P90*f, l.P99*f, l.P999*f, l.Mean*f
		l.Count /= n
		return l
	}
	reps := make([]results.Run, c.Repeats)
	for k := range reps {
		f := math.Exp(c.RepeatNoise * rng.NormFloat64())
		r := run
		r.Throughput = results.Throughput{CyclesPerSec: run.Throughput.CyclesPerSec * f, AcquiresPerSec: run.Throughput.AcquiresPerSec * f}
		r.AcquireLatency, r.ReleaseLatency = scale(run.AcquireLatency, 1/f), scale(run.ReleaseLatency, 1/f)
		r.AcquireFailedLatency = scale(run.AcquireFailedLatency, 1)
		r.Outcomes = results.Outcomes{Tally: results.Tally{Acquired: run.Outcomes.Acquired / n, NotAcquired: run.Outcomes.NotAcquired / n}, PerMaster: run.Outcomes.PerMaster}
		r.MeasuredSeconds = run.MeasuredSeconds / float64(n)
		// The cell's seconds are split among its repeats, in order.
		r.StartedAt = run.StartedAt.Add(time.Duration(float64(k) * r.MeasuredSeconds * float64(time.Second)))
		reps[k] = r
	}
	return results.CombineRepeats(reps)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// configOf reads a config written as a free map, as result files had them
// before the config was typed.
func configOf(t testing.TB, m map[string]any) *results.CellConfig {
	t.Helper()
	b, err := json.Marshal(m)
	must(t, err)
	var c results.CellConfig
	must(t, json.Unmarshal(b, &c))
	return &c
}

func cfg(persistence, mode string, workers int, load string, rate float64, keys float64) map[string]any {
	return map[string]any{
		"local": 5, "masters": []any{}, "persistence": persistence, "driver": "lockbench", "mode": mode,
		"wait": "all", "load": load, "workers": workers, "rate": rate, "keys": keys,
		"distribution": "uniform", "ttl": "10s", "hold": "0s",
	}
}

// sweepCells is a realistic sweep: persistence × mode × workers in closed
// loop (with contention on 1000 keys), open-loop rate steps whose p99
// crosses 10 ms at 40 000/s, and a cell with a master killed and restarted.
func sweepCells() []synthCell {
	var cells []synthCell
	i := 0
	for _, pers := range []string{"none", "aof-always"} {
		for _, mode := range []string{"sequential", "multiplexed"} {
			for _, w := range []int{8, 32} {
				median := 350.0
				if mode == "sequential" {
					median *= 2.6
				}
				if pers == "aof-always" {
					median *= 3
				}
				median *= 1 + float64(w)/40
				c := synthCell{
					Index: i, Axes: map[string]string{"persistence": pers, "mode": mode, "workers": fmt.Sprint(w)},
					Config: cfg(pers, mode, w, "closed", 0, 1000), MedianUs: median, Sigma: 0.45,
					PerSec: int(float64(w) * 1e6 / median / 8), Seconds: 10, FailedPerS: w * w / 8, ClientShare: 0.35, Seed: 7,
					SlowFrom: -1, SlowTo: -1, Repeats: 5, RepeatNoise: 0.04,
				}
				if i == 5 {
					c.Events = []results.Event{{AtSeconds: 3, Kind: "kill", Target: "127.0.0.1:7002", Detail: "SIGKILL"}, {AtSeconds: 6, Kind: "restart", Target: "127.0.0.1:7002"}}
					c.SlowFrom, c.SlowTo = 3, 6
					c.Repeats = 0 // the fault cell ran once
				}
				cells = append(cells, c)
				i++
			}
		}
	}
	for _, r := range []float64{5000, 10000, 20000, 40000} {
		median := 600.0
		if r == 40000 {
			median = 9000 // p99 ≈ 26 ms: past the knee
		}
		cells = append(cells, synthCell{
			Index: i, Axes: map[string]string{"load": "open", "rate": fmt.Sprint(r)},
			Config: cfg("none", "multiplexed", 512, "open", r, 100000), MedianUs: median, Sigma: 0.42,
			PerSec: int(r * 0.999), Seconds: 5, FailedPerS: 2, ClientShare: 0.4, Seed: 11, SlowFrom: -1, SlowTo: -1,
		})
		i++
	}
	return cells
}
