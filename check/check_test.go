package check

import (
	"testing"
	"time"

	"lockbench/workloads"
)

// The checker must be able to go red: overlapping windows of one key count,
// touching or separate windows and other keys do not.
func TestOverlapsGoRed(t *testing.T) {
	// A hold from a to b: acquired at a, used until b, long TTL.
	h := func(k uint64, a, b int64, c int) Hold {
		return Hold{Key: k, T1: a, Used: b, TTL: int64(time.Hour), Client: c}
	}
	cases := []struct {
		holds     []Hold
		viol, max int64
	}{
		{[]Hold{h(1, 0, 10, 0), h(1, 10, 20, 1), h(2, 5, 15, 0)}, 0, 1},
		{[]Hold{h(1, 0, 10, 0), h(1, 5, 20, 1)}, 1, 2},
		{[]Hold{h(1, 0, 100, 0), h(1, 10, 20, 1), h(1, 30, 40, 1), h(1, 35, 50, 0)}, 3, 3},
		{[]Hold{h(1, 0, 10, 0), h(1, 5, 5, 1)}, 0, 1}, // no window left: not judged
	}
	for i, c := range cases {
		v, m, _ := Overlaps(c.holds)
		if v != c.viol || m != c.max {
			t.Errorf("case %d: %d violations, max %d; want %d, %d", i, v, m, c.viol, c.max)
		}
	}
	// The live probe the clients share (workloads.Probe) judges alike.
	p := &workloads.Probe{}
	now := time.Now()
	a := p.Enter(1, now.Add(time.Hour))
	p.Enter(1, now.Add(time.Hour)) // overlaps a
	p.Exit(a)
	p.Enter(2, now.Add(-time.Second)) // stalled past its validity: not judged
	p.Enter(2, now.Add(time.Hour))
	if p.Violations() != 1 || p.MaxConcurrent() != 2 || p.NotJudged() != 1 {
		t.Fatalf("probe: %d violations, max %d, %d not judged; want 1, 2, 1", p.Violations(), p.MaxConcurrent(), p.NotJudged())
	}
}

// The window is t1 + elapsed .. min(used, t1 + TTL - (TTL x drift + 2ms)),
// computed from the client's log alone.
func TestHoldWindow(t *testing.T) {
	ms := int64(time.Millisecond)
	slow := Hold{Key: 1, T1: 0, Elapsed: 600 * ms, Used: 5000 * ms, TTL: 1000 * ms, DriftFactor: 0.01}
	if s, e, ok := slow.Window(); !ok || s != 600*ms || e != 988*ms {
		t.Fatalf("window %d..%d ok %v; want 600ms..988ms", s, e, ok)
	}
	early := slow
	early.Used = 700 * ms
	if _, e, _ := early.Window(); e != 700*ms {
		t.Fatalf("a hold used until 700ms ends at %d", e)
	}
	late := slow
	late.Elapsed = 988 * ms // no validity left when the acquire returned
	if _, _, ok := late.Window(); ok {
		t.Fatal("a hold with no validity left was judged")
	}
	// A second holder at t1 + 900ms is inside the first one's window.
	second := Hold{Key: 1, T1: 850 * ms, Elapsed: 50 * ms, Used: 950 * ms, TTL: 1000 * ms, DriftFactor: 0.01}
	if v, m, u := Overlaps([]Hold{slow, second, late}); v != 1 || m != 2 || u != 1 {
		t.Fatalf("%d violations, max %d, %d not judged; want 1, 2, 1", v, m, u)
	}
}

// Exclusion as the holders used their locks: a holder paused past its
// validity that then writes overlaps the next holder, though within the
// validity it does not; one that saw its lock expired and wrote nothing
// (Skipped) kept to the promise.
func TestUseOverlaps(t *testing.T) {
	ms := int64(time.Millisecond)
	paused := Hold{Key: 1, T1: 0, Elapsed: 10 * ms, Used: 3000 * ms, TTL: 1000 * ms, DriftFactor: 0.01, Outcome: Written}
	next := Hold{Key: 1, T1: 1500 * ms, Elapsed: 10 * ms, Used: 1800 * ms, TTL: 1000 * ms, DriftFactor: 0.01, Outcome: Written}
	if v, m := UseOverlaps([]Hold{paused, next}); v != 1 || m != 2 {
		t.Fatalf("as used: %d violations, max %d; want 1, 2", v, m)
	}
	if v, _, _ := Overlaps([]Hold{paused, next}); v != 0 {
		t.Fatalf("within the validity: %d violations; want 0", v)
	}
	careful := paused
	careful.Outcome = Skipped
	if v, _ := UseOverlaps([]Hold{careful, next}); v != 0 {
		t.Fatalf("a holder that saw its lock expired and wrote nothing: %d violations; want 0", v)
	}
}

// The outage is a span on the acquires' own timestamps: the longest gap
// from the fault to the end, or all of it when nothing was granted.
func TestUnavailableSpan(t *testing.T) {
	s := int64(time.Second)
	ck := Findings{Acquired: []Acquire{{Done: 1 * s}, {Done: 2*s + s/2}, {Done: 5 * s}, {Done: 5*s + s/10}}}
	if span, toEnd := ck.Unavailable(2*s, 6*s); span != 2*s+s/2 || toEnd {
		t.Fatalf("span %v to end %v; want 2.5s (2.5 s to 5 s), ended", time.Duration(span), toEnd)
	}
	if span, toEnd := ck.Unavailable(5*s+s/2, 9*s); span != 3*s+s/2 || !toEnd {
		t.Fatalf("span %v to end %v; want 3.5s to the end", time.Duration(span), toEnd)
	}
	if span, _ := ck.Unavailable(0, 6*s); span != 2*s+s/2 {
		t.Fatalf("span %v; want the longest gap 2.5s", time.Duration(span))
	}
}
