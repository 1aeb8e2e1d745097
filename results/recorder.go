package results

import (
	"fmt"
	"io"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Metric indexes for Recorder.
const (
	Acquire = iota
	AcquireUncorrected
	Failed
	Release
	// TimeToLock is a caller's wait from its first attempt on a key to
	// holding it; GaveUp what callers that gave up had waited; HandoffGap a
	// key's idle time between a release and its next holder while callers
	// waited.
	TimeToLock
	GaveUp
	HandoffGap
	numMetrics
)

var metricNames = [numMetrics]string{MetricAcquire, MetricAcquireUncorrected, MetricFailed, MetricRelease,
	MetricTimeToLock, MetricGaveUp, MetricHandoffGap}

// MetricName is the report metric's name, as its .hlog files and
// intervals are named.
func MetricName(m int) string { return metricNames[m] }

// LogMetrics are the interval logs a cell writes, by metric index: the
// uncorrected acquire latency only in open loop.
func LogMetrics(openLoop bool) []int {
	m := []int{Acquire, Failed, Release, TimeToLock, GaveUp, HandoffGap}
	if openLoop {
		m = append(m, AcquireUncorrected)
	}
	return m
}

// Interval is what one flush saw: for progress lines and timelines.
type Interval struct {
	Start, End time.Time
	Counts     [numMetrics]int64
	AcquireP99 float64 // µs
}

// Recorder collects latencies from many workers. Histograms are not
// thread-safe and 140 KB each, so workers share a few mutex-guarded shards
// (a histogram per worker would cost gigabytes at 2,000 workers). Once a
// second Flush folds the shards into an interval histogram per metric,
// streams it to an .hlog writer and adds it to the window's totals, so
// memory stays flat however long the run.
type Recorder struct {
	shards []recShard
	mu     sync.Mutex
	totals [numMetrics]*hdrhistogram.Histogram
	logs   [numMetrics]*hdrhistogram.HistogramLogWriter
	last   time.Time
	err    error
}

type recShard struct {
	mu sync.Mutex
	h  [numMetrics]*hdrhistogram.Histogram
	_  [64]byte // keep shards on separate cache lines
}

// NewRecorder makes a recorder with n shards, its window opening at start.
func NewRecorder(shards int, start time.Time) *Recorder {
	r := &Recorder{shards: make([]recShard, max(shards, 1)), last: start}
	for i := range r.shards {
		for m := range numMetrics {
			r.shards[i].h[m] = NewHistogram()
		}
	}
	for m := range numMetrics {
		r.totals[m] = NewHistogram()
	}
	return r
}

// LogTo streams metric's interval histograms to w as an HdrHistogram log
// (absolute Unix-ms timestamps, values in µs).
func (r *Recorder) LogTo(metric int, w io.Writer, start time.Time) error {
	lw, err := newLogWriter(w, metricNames[metric], start.UnixMilli())
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.logs[metric] = lw
	r.mu.Unlock()
	return nil
}

// Record adds one latency of metric from a worker (any shard index).
func (r *Recorder) Record(shard, metric int, d time.Duration) {
	s := &r.shards[shard%len(r.shards)]
	s.mu.Lock()
	RecordDuration(s.h[metric], d)
	s.mu.Unlock()
}

// Sample is one latency of a metric.
type Sample struct {
	Metric int
	D      time.Duration
}

// RecordAll adds one operation's latencies from a worker under one lock
// of its shard.
func (r *Recorder) RecordAll(shard int, samples []Sample) {
	s := &r.shards[shard%len(r.shards)]
	s.mu.Lock()
	for _, x := range samples {
		RecordDuration(s.h[x.Metric], x.D)
	}
	s.mu.Unlock()
}

// Flush closes the interval ending at now.
func (r *Recorder) Flush(now time.Time) Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	iv := Interval{Start: r.last, End: now}
	var interval [numMetrics]*hdrhistogram.Histogram
	for m := range numMetrics {
		interval[m] = NewHistogram()
	}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for m := range numMetrics {
			if s.h[m].TotalCount() > 0 {
				interval[m].Merge(s.h[m])
				s.h[m].Reset()
			}
		}
		s.mu.Unlock()
	}
	for m := range numMetrics {
		h := interval[m]
		iv.Counts[m] = h.TotalCount()
		r.totals[m].Merge(h)
		if lw := r.logs[m]; lw != nil && r.err == nil {
			h.SetStartTimeMs(r.last.UnixMilli())
			h.SetEndTimeMs(now.UnixMilli())
			// Untagged: one metric per file (see WriteIntervalLog).
			// The library prints the max column as value/1e6 (its ns→ms
			// default, not settable); the encoded histogram is exact µs.
			if err := lw.OutputIntervalHistogram(h); err != nil {
				r.err = fmt.Errorf("write %s log: %w", metricNames[m], err)
			}
		}
	}
	if iv.Counts[Acquire] > 0 {
		iv.AcquireP99 = float64(interval[Acquire].ValueAtQuantile(99))
	}
	r.last = now
	return iv
}

// Total is the merged histogram of metric over every flushed interval.
func (r *Recorder) Total(metric int) *hdrhistogram.Histogram {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.totals[metric]
}

// Err is the first error writing a log, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
