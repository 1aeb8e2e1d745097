package pool

import (
	"bytes"
	"context"
	"runtime/pprof"
	"slices"

	"github.com/google/pprof/profile"
)

// The --net-latency proxy runs inside lockbench, so its CPU is lockbench's
// in /proc. Its goroutines carry a profiler label (goroutines inherit
// labels from the one that starts them), and a CPU profile over the
// measured window tells their share apart.
const proxyLabelKey, proxyLabelValue = "lockbench", "net-latency-proxy"

// WithProxyLabel runs f, and every goroutine it starts, under the label.
func WithProxyLabel(f func()) {
	pprof.Do(context.Background(), pprof.Labels(proxyLabelKey, proxyLabelValue), func(context.Context) { f() })
}

// proxyProfile samples lockbench's CPU by label over the window.
type proxyProfile struct {
	buf bytes.Buffer
	on  bool
}

// start begins profiling; false when a profile is already running (then
// the proxy's share stays unknown).
func (p *proxyProfile) start() bool {
	p.on = pprof.StartCPUProfile(&p.buf) == nil
	return p.on
}

// stop ends profiling and returns the proxy's CPU seconds in the window.
func (p *proxyProfile) stop() (float64, bool) {
	if !p.on {
		return 0, false
	}
	pprof.StopCPUProfile()
	p.on = false
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return 0, false
	}
	return labelledSeconds(prof, proxyLabelKey, proxyLabelValue)
}

// labelledSeconds sums the CPU of the samples that carry key=value.
func labelledSeconds(prof *profile.Profile, key, value string) (float64, bool) {
	idx := slices.IndexFunc(prof.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" && t.Unit == "nanoseconds" })
	if idx < 0 {
		return 0, false
	}
	var ns int64
	for _, s := range prof.Sample {
		if slices.Contains(s.Label[key], value) {
			ns += s.Value[idx]
		}
	}
	return float64(ns) / 1e9, true
}
