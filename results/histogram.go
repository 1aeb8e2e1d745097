package results

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: 1 µs to 60 s at 3 significant digits.
const (
	MinMicros = 1
	MaxMicros = 60_000_000
	SigFigs   = 3
)

// NewHistogram returns an empty latency histogram in microseconds. It is not
// safe for concurrent use: keep one per worker and Merge them.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(MinMicros, MaxMicros, SigFigs)
}

// RecordDuration records d in microseconds, clamped into the histogram's range
// so that an outlier is kept as the max rather than dropped.
func RecordDuration(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < MinMicros {
		us = MinMicros
	}
	if us > MaxMicros {
		us = MaxMicros
	}
	_ = h.RecordValue(us)
}

// Summarize reads the usual percentiles off a histogram.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50:   float64(h.ValueAtQuantile(50)),
		P90:   float64(h.ValueAtQuantile(90)),
		P99:   float64(h.ValueAtQuantile(99)),
		P999:  float64(h.ValueAtQuantile(99.9)),
		Max:   float64(h.Max()),
		Mean:  h.Mean(),
		Count: h.TotalCount(),
	}
}

// SummarizeDurations is the latency summary of samples (a baseline's).
func SummarizeDurations(ds []time.Duration) Latency {
	h := NewHistogram()
	for _, d := range ds {
		RecordDuration(h, d)
	}
	return Summarize(h)
}
