package results

import (
	"strings"
	"testing"
	"time"
)

// Each repeat draws its own moment within the span, the same for the same
// seed and repeat; a fault without a span keeps its moment.
func TestDrawMoments(t *testing.T) {
	fs := []Fault{{At: time.Second, Kind: FaultReplicationLag}, {At: 1500 * time.Millisecond, AtUntil: 3 * time.Second, Kind: FaultCrash, Masters: []int{0}}}
	seen := map[time.Duration]bool{}
	for r := 1; r <= 20; r++ {
		d := DrawMoments(fs, 42, r)
		if again := DrawMoments(fs, 42, r); again[1].At != d[1].At {
			t.Fatalf("repeat %d drew %v then %v from one seed", r, d[1].At, again[1].At)
		}
		switch f := d[1]; {
		case d[0].At != time.Second || d[0].Drawn:
			t.Fatalf("a fault without a span moved: %+v", d[0])
		case !f.Drawn || f.At < 1500*time.Millisecond || f.At > 3*time.Second || f.From() != 1500*time.Millisecond:
			t.Fatalf("drawn %+v; want a moment in 1.5s..3s", f)
		case !strings.Contains(f.String(), "(drawn in 1.5s..3s)"):
			t.Fatalf("%q does not say the moment was drawn", f.String())
		}
		seen[d[1].At] = true
	}
	if fs[1].Drawn || fs[1].At != 1500*time.Millisecond {
		t.Fatal("DrawMoments changed its argument")
	}
	if len(seen) < 10 {
		t.Fatalf("20 repeats drew %d moments; want them spread", len(seen))
	}
}
