package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"lockbench/report/plots"
	"lockbench/results"
)

// survival counts the faults row r survived, of those judged: under each
// fault the outcomes the needs ask there held in every judged run
// (settled or not), or, where they ask none, no update was lost, which a
// fenced design whose exclusion broke still holds.
func survival(r MatrixRow, faults []string, needs Needs) (survived, judged int) {
	for i, f := range faults {
		c := r.Faults[i]
		if f == "none" || !c.judged() {
			continue
		}
		judged++
		var asked []Need
		for _, n := range needs.all() {
			if n.Fault == f {
				asked = append(asked, n)
			}
		}
		if len(asked) == 0 {
			asked = []Need{{Outcome: NoLostUpdate, Fault: f}}
		}
		if held(c, asked) {
			survived++
		}
	}
	return survived, judged
}

// held says nothing in cell c broke the needs asked: no run broke the
// outcome, and an outage stayed within an up-in need's bound.
func held(c MatrixCell, asked []Need) bool {
	for _, n := range asked {
		switch d := c.Down; n.Outcome {
		case NoOverlap:
			if c.Overlap.Broken > 0 {
				return false
			}
		case NoLostUpdate:
			if c.Lost.Broken > 0 {
				return false
			}
		default: // up-in
			if d != nil && (d.ToEnd > 0 || d.Max > n.Within.Seconds()) {
				return false
			}
		}
	}
	return true
}

// PictureText says what the picture shows.
func (w *WhichLock) PictureText() string {
	survived := "no update was lost in any judged run (a fenced design whose exclusion broke, yet lost nothing, survives)"
	if len(w.Needs.all()) > 0 {
		survived = "the outcomes your needs ask under it held in every judged run, or, under a fault they do not name, no update was lost (a fenced design whose exclusion broke, yet lost nothing, survives)"
	}
	return "The picture: each design at its capacity (left of the dashed line, on its own mark: none within the SLO) against the faults it survived, of those judged: " + survived + "."
}

// WhichLockPicture is the matrix's one picture: capacity against faults
// survived, one point per design.
const WhichLockPicture = "which-lock.png"

// picturePoint is one design on the picture.
type picturePoint struct {
	Label string
	X, Y  float64
	// Off: the design has no capacity within the SLO (or none measured):
	// it stands on its own mark left of every capacity.
	Off bool
}

// picturePoints places every design: at its capacity (an older run's
// price cycles/s), or, with none, on the mark left of the lowest.
func (w *WhichLock) picturePoints() (pts []picturePoint, offAt float64) {
	lowest := math.Inf(1)
	for _, r := range w.Rows {
		if x := r.pictureX(); x > 0 {
			lowest = math.Min(lowest, x)
		}
	}
	offAt = 1
	if !math.IsInf(lowest, 1) {
		offAt = lowest / 4
	}
	for _, r := range w.Rows {
		p := picturePoint{Label: fmt.Sprintf("%s (%d/%d)", r.Design, r.Survived, r.Judged), X: r.pictureX(), Y: float64(r.Survived)}
		if p.X <= 0 {
			why := "no capacity within the SLO"
			if r.Capacity == nil || r.Capacity.Steps == 0 {
				why = "capacity not measured"
			}
			p.X, p.Off, p.Label = offAt, true, fmt.Sprintf("%s (%d/%d; %s)", r.Design, r.Survived, r.Judged, why)
		}
		pts = append(pts, p)
	}
	return pts, offAt
}

// pictureX is the row's capacity on the picture (0: none).
func (r MatrixRow) pictureX() float64 {
	if r.Capacity != nil {
		return r.Capacity.CyclesPerSec
	}
	if r.Priced {
		return r.CyclesPerSec
	}
	return 0
}

func (w *WhichLock) writePicture(out string) error {
	pts, offAt := w.picturePoints()
	if len(pts) == 0 {
		return nil
	}
	pn := &plots.Panel{X: plots.Axis{Label: "capacity: lock cycles/s within the SLO (log)", Log: true},
		Y: plots.Axis{Label: "faults survived (of those judged)", Min: plots.F(0)}}
	hi := offAt
	for i, p := range pts {
		hi = math.Max(hi, p.X)
		pn.Series = append(pn.Series, plots.Series{Label: p.Label, X: []float64{p.X}, Y: []float64{p.Y}, Color: i, Glyph: 1 + i%6})
	}
	if slicesAnyOff(pts) {
		pn.VLines = []plots.Marker{{At: offAt * 2, Legend: "left of the line: no capacity within the SLO", Color: 7}}
		pn.X.Ticks = offTicks(offAt, hi)
	}
	b, err := plots.Render(&plots.Figure{Title: "Which lock: price against the faults it survived", Grid: [][]*plots.Panel{{pn}}, Width: 900, Height: 520}, "png")
	if err != nil {
		return err
	}
	return results.WriteFileShared(filepath.Join(out, WhichLockPicture), func(wr io.Writer) error { _, err := wr.Write(b); return err })
}

func slicesAnyOff(pts []picturePoint) bool {
	for _, p := range pts {
		if p.Off {
			return true
		}
	}
	return false
}

// offTicks label the off mark "none" and the capacities at 1, 2 and 5
// times the powers of ten up to hi: the log axis's own ticks would put a
// figure under the mark.
func offTicks(offAt, hi float64) []plots.Tick {
	ts := []plots.Tick{{Value: offAt, Label: "none"}}
	for p := math.Pow10(int(math.Floor(math.Log10(offAt * 2)))); p <= hi*10; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * p; v > offAt*2 && v <= hi*1.5 {
				ts = append(ts, plots.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
	}
	return ts
}
