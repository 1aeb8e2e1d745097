package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"lockbench/results"
)

// Two designs whose capacity ranges overlap are not ranked: each names the
// other after ≈, whether the overlap is of the repeats' ranges (a: 900–1100,
// b: 1000–1200) or reaches into a knee's bracket (k: 600 at 1 worker, the
// knee lies below the 4 workers' 950, which broke the SLO); c's range
// (2900–3100) touches none, and n, with no step within the SLO, has no
// range to overlap.
func TestOverlappingCapacitiesAreNotRanked(t *testing.T) {
	pc := &PriceCells{SLO: 10 * time.Millisecond, Ladder: map[string][]string{
		"a": {"a.price-4"}, "b": {"b.price-4"}, "c": {"c.price-4"}, "k": {"k.price-1", "k.price-4"}, "n": {"n.price-1"}}}
	m := pricedMatrix(pc, []string{"a", "b", "c", "k", "n"}, []priced{
		{name: "a.price-4", workers: 4, cps: 1000, p99: 2000, limit: results.LimitMachine, spreadLo: 900, spread: 1100},
		{name: "b.price-4", workers: 4, cps: 1050, p99: 2000, limit: results.LimitMachine, spreadLo: 1000, spread: 1200},
		{name: "c.price-4", workers: 4, cps: 3000, p99: 2000, limit: results.LimitMachine, spreadLo: 2900, spread: 3100},
		{name: "k.price-1", workers: 1, cps: 600, p99: 4000, limit: results.LimitNone},
		{name: "k.price-4", workers: 4, cps: 950, p99: 15000, limit: results.LimitNone},
		{name: "n.price-1", workers: 1, cps: 90, p99: 12000, limit: results.LimitServer},
	})
	want := map[string][]string{"a": {"b", "k"}, "b": {"a"}, "c": nil, "k": {"a"}, "n": nil}
	for _, r := range m.Rows {
		if got := r.Capacity.Overlaps; !slices.Equal(got, want[r.Design]) {
			t.Errorf("%s: overlaps %v; want %v", r.Design, got, want[r.Design])
		}
		hasApprox := strings.Contains(r.CyclesText(), "≈")
		if hasApprox != (len(want[r.Design]) > 0) {
			t.Errorf("%s: the capacity column reads %q", r.Design, r.CyclesText())
		}
	}
	if got := m.Rows[0].CyclesText(); !strings.HasSuffix(got, "; ≈ b, k") {
		t.Errorf("a's capacity reads %q; want it to end \"; ≈ b, k\"", got)
	}
	var md strings.Builder
	if err := m.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| c | ≥ 3000 (2900–3100), machine |") {
		t.Errorf("c, apart from every other range, is not quoted bare:\n%s", md.String())
	}
}
