package workloads

import (
	"testing"
	"time"
)

// The schedule's arithmetic is exact: a window of D at rate R offers
// exactly R·D starts whatever the phase of its edges, and ticketsBefore(t)
// is the first ticket not before t.
func TestPacerScheduleCountsExactly(t *testing.T) {
	begin := time.Unix(1_700_000_000, 123)
	for _, rate := range []float64{3, 500, 5000, 80_000, 333_333} {
		for _, warm := range []time.Duration{0, 7 * time.Millisecond, time.Second} {
			p := newPacer(rate, begin, begin.Add(warm), begin.Add(warm+2*time.Second), 1)
			want := int64(rate * 2)
			if got := p.offered(p.end); got < want-1 || got > want+1 {
				t.Errorf("rate %v warm-up %v: offered %d over 2s, want %d", rate, warm, got, want)
			}
			for _, at := range []time.Time{p.measure, p.end, begin.Add(1234567)} {
				n := p.ticketsBefore(at)
				if (n > 0 && !p.at(n-1).Before(at)) || p.at(n).Before(at) {
					t.Errorf("rate %v: ticketsBefore(%v) = %d: at(n-1) %v, at(n) %v", rate, at.Sub(begin), n, p.at(n-1).Sub(begin), p.at(n).Sub(begin))
				}
			}
			if p.offered(p.measure) != 0 || p.offered(p.end.Add(time.Hour)) != p.offered(p.end) {
				t.Errorf("rate %v: offered before the window or after its end is wrong", rate)
			}
		}
	}
}
