package workloads

import (
	"context"
	"runtime"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"lockbench/report"
)

// pacer hands out intended start times at a constant rate. Go's timers wake
// up to ~1 ms late on an idle process (measured here: a 50 µs Sleep takes
// 1.08 ms), and in open loop that lag would be charged to the lock as
// latency. So the pacer sleeps on its own OS thread with nanosleep and a
// 1 ns timer slack: ~20-30 µs late instead. Its remaining lag is recorded so
// the report can show how much of the corrected latency is the generator's.
type pacer struct {
	rate    float64
	begin   time.Time
	end     time.Time
	measure time.Time // lag is recorded from here on
	lag     *hdrhistogram.Histogram
}

// run sends intended times on out until end or ctx; it closes out. When
// every worker is busy the send blocks, but later times stay on schedule, so
// queueing delay lands in the corrected latency. It returns how many
// tickets in the measured window were scheduled and how many could not be
// handed out before the end.
func (p *pacer) run(ctx context.Context, out chan<- time.Time) (offered, unserved int64) {
	defer close(out)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// PR_SET_TIMERSLACK applies to this thread only; it ends with it.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	interval := float64(time.Second) / p.rate
	for i := int64(0); ; i++ {
		intended := p.begin.Add(time.Duration(float64(i) * interval))
		if !intended.Before(p.end) {
			return
		}
		for {
			d := time.Until(intended)
			if d <= 0 || ctx.Err() != nil {
				break
			}
			// Short slices keep an interrupt prompt.
			ts := unix.NsecToTimespec(int64(min(d, 50*time.Millisecond)))
			_ = unix.Nanosleep(&ts, nil)
		}
		if ctx.Err() != nil {
			return
		}
		measured := !intended.Before(p.measure)
		if measured {
			offered++
			report.RecordDuration(p.lag, time.Since(intended))
		}
		select {
		case out <- intended:
		case <-ctx.Done():
			if measured {
				unserved++
			}
			return
		}
	}
}
