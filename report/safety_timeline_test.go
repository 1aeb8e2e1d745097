package report

import (
	"lockbench/results"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// timelineCell is a chaos-like cell: 6 one-second intervals from t=0.
func timelineCell(safety results.Safety) *cell {
	var acq []*hdrhistogram.Histogram
	for i := range 6 {
		h := results.NewHistogram()
		_ = h.RecordValue(500)
		h.SetStartTimeMs(int64(1_000_000 + 1000*i))
		h.SetEndTimeMs(int64(1_000_000 + 1000*(i+1)))
		acq = append(acq, h)
	}
	return &cell{Info: results.CellInfo{Index: 0, Label: "crash"}, Intervals: map[string][]*hdrhistogram.Histogram{results.MetricAcquire: acq},
		Run: results.Run{Safety: safety, Events: []results.Event{{AtSeconds: 3, Kind: "crash", Target: "master 1"}}}}
}

// The chaos timeline says when the violations and lost updates happened:
// a third panel, per second, next to the fault marks.
func TestChaosTimelineShowsSafetyPerSecond(t *testing.T) {
	s := results.Safety{ResourceChecked: true, Violations: 5, LostUpdates: 3, Timeline: []results.SafetySecond{
		{Second: 3, Violations: 2, LostUpdates: 1}, {Second: 4, Violations: 3, LostUpdates: 2}}}
	f := timelineFigure(timelineCell(s), 0, &Summary{})
	if f == nil || len(f.Fig.Grid) != 3 {
		t.Fatalf("want throughput, p99 and safety panels, got %+v", f)
	}
	p := f.Fig.Grid[2][0]
	if !strings.Contains(p.Title, "5 violations, 3 lost updates") || len(p.VLines) != 1 || p.VLines[0].At != 3 {
		t.Fatalf("safety panel %q with marks %+v", p.Title, p.VLines)
	}
	viol := p.Series[0]
	// Steps: second i is drawn from i to i+1 at its count.
	for i := 0; i < len(viol.X); i += 2 {
		sec := int(viol.X[i])
		want := map[int]float64{3: 2, 4: 3}[sec]
		if viol.Y[i] != want || viol.Y[i+1] != want || viol.X[i+1] != float64(sec+1) {
			t.Errorf("second %d: violations drawn %v..%v at %v, want %v", sec, viol.X[i], viol.X[i+1], viol.Y[i], want)
		}
	}
	if len(viol.X) != 12 {
		t.Errorf("violations span %d points, want the cell's 6 seconds as steps", len(viol.X))
	}
	if !strings.Contains(f.Caption, "lost updates") {
		t.Errorf("caption %q does not explain the safety panel", f.Caption)
	}
	if _, err := renderFigure(*f, "png"); err != nil {
		t.Fatal(err)
	}
	// A safe chaos cell still gets the panel (all zero: "none", not absent).
	safe := timelineFigure(timelineCell(results.Safety{ResourceChecked: true}), 0, &Summary{})
	if len(safe.Fig.Grid) != 3 {
		t.Fatalf("a chaos cell without violations has %d panels, want 3", len(safe.Fig.Grid))
	}
	if _, err := renderFigure(*safe, "png"); err != nil {
		t.Fatal(err)
	}
	// A plain benchmark cell has no protected resource: no safety panel.
	if plain := timelineFigure(timelineCell(results.Safety{}), 0, &Summary{}); len(plain.Fig.Grid) != 2 {
		t.Fatalf("a benchmark cell has %d panels, want 2", len(plain.Fig.Grid))
	}
}
