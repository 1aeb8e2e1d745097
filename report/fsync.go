package report

// FsyncShare is the part of a persistent cell's latency that the same cell
// without persistence did not have: (with − without) / with, 0 when
// persistence did not make it slower.
func FsyncShare(with, without float64) float64 {
	if with <= 0 || without >= with {
		return 0
	}
	return (with - without) / with
}

// fsyncShares sets FsyncShareP50 on every persistent cell whose twin
// without persistence (the same other axes) is in the same sweep.
func fsyncShares(cells []*cell, sums []CellSummary) {
	index := map[*cell]int{}
	for i, c := range cells {
		index[c] = i
	}
	for _, g := range groupBy(cells, map[string]bool{"persistence": true}) {
		var none *CellSummary
		for _, c := range g.Cells {
			if s := &sums[index[c]]; s.Persistence == "none" && s.Acquire.Count > 0 {
				none = s
			}
		}
		if none == nil {
			continue
		}
		for _, c := range g.Cells {
			s := &sums[index[c]]
			if s.Persistence != "" && s.Persistence != "none" && s.Acquire.Count > 0 {
				f := FsyncShare(s.Acquire.P50, none.Acquire.P50)
				s.FsyncShareP50 = &f
			}
		}
	}
}
