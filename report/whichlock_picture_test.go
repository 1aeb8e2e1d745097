package report

import (
	"strings"
	"testing"
	"time"
)

// Survival is counted per needed outcome: a fenced design whose exclusion
// broke under a fault but lost nothing survives it (no lost update, what
// counts where the needs name no outcome), and survives a no-lost-update
// need there, yet not a no-overlap one; a design that lost an update
// survives neither; an outage over an up-in need's bound is not survived.
func TestSurvivalPerNeededOutcome(t *testing.T) {
	p := &WhichLockPlan{Designs: []string{"x-fencing", "plain"}, Faults: []string{"none", "crash", "kill"}}
	cells := map[string][]run{
		"x-fencing.crash": {{overlap: 2}, {overlap: 1}, {}},
		"x-fencing.kill":  {{down: 1}, {down: 3}, {down: 2}},
		"plain.crash":     {{overlap: 2, lost: 1}, {}, {}},
		"plain.kill":      {{down: 1}, {down: 1}, {down: 1}},
	}
	for _, c := range []struct {
		needs         Needs
		fenced, plain int
	}{
		{Needs{}, 2, 1},
		{Needs{Under: []Need{{Outcome: NoLostUpdate, Fault: "crash"}}}, 2, 1},
		{Needs{Under: []Need{{Outcome: NoOverlap, Fault: "crash"}}}, 1, 1},
		{Needs{Under: []Need{{Outcome: "up-in", Fault: "kill", Within: 2 * time.Second}}}, 1, 1},
	} {
		p.Needs = c.needs
		m := matrixOf(p, cells)
		f, pl := m.Rows[0], m.Rows[1]
		if f.Survived != c.fenced || pl.Survived != c.plain || f.Judged != 2 || pl.Judged != 2 {
			t.Errorf("needs %q: fenced survived %d/%d, plain %d/%d; want %d/2 and %d/2", c.needs.String(), f.Survived, f.Judged, pl.Survived, pl.Judged, c.fenced, c.plain)
		}
	}
}

// Every design is on the picture: one with no capacity within the SLO (or
// none measured) on its own mark, left of the lowest capacity, and said so
// in its label, never dropped at x = 0.
func TestPictureShowsEveryDesign(t *testing.T) {
	pc := &PriceCells{SLO: 10 * time.Millisecond, Ladder: map[string][]string{"a": {"a.price-4"}, "b": {"b.price-4"}, "slow": {"slow.price-1"}}}
	m := pricedMatrix(pc, []string{"a", "b", "slow", "gone"}, []priced{
		{name: "a.price-4", workers: 4, cps: 1000, p99: 2000},
		{name: "b.price-4", workers: 4, cps: 40000, p99: 2000},
		{name: "slow.price-1", workers: 1, cps: 90, p99: 14000},
	})
	pts, offAt := m.picturePoints()
	if len(pts) != 4 {
		t.Fatalf("%d points for 4 designs: %+v", len(pts), pts)
	}
	if offAt != 250 {
		t.Errorf("the off mark at %v; want a quarter of the lowest capacity, 250", offAt)
	}
	for i, want := range []struct {
		x     float64
		off   bool
		label string
	}{{1000, false, "a (0/0)"}, {40000, false, "b (0/0)"}, {250, true, "slow (0/0; no capacity within the SLO)"}, {250, true, "gone (0/0; capacity not measured)"}} {
		if p := pts[i]; p.X != want.x || p.Off != want.off || p.Label != want.label {
			t.Errorf("point %d: %+v; want x %v, off %v, %q", i, p, want.x, want.off, want.label)
		}
	}
	if ts := offTicks(offAt, 40000); ts[0].Label != "none" || ts[1].Value != 1000 || ts[len(ts)-1].Value != 50000 {
		t.Errorf("ticks %+v; want none at the mark, then 1000 … 50000", ts)
	}
	dir := t.TempDir()
	if err := m.writePicture(dir); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.PictureText(), "no update was lost") {
		t.Errorf("the picture's words do not say what survived means: %q", m.PictureText())
	}
}
