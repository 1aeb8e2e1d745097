package runner

import (
	"lockbench/chaos"
	"lockbench/metrics"
)

// liveCell is a cell's live metrics: the cell's metrics, which also
// take client processes' counts in bulk.
type liveCell struct{ *metrics.Cell }

func (c liveCell) AddCounts(d chaos.LiveCounts) {
	c.Add(metrics.Tally{Cycles: d.Cycles, NotAcquired: d.NotAcquired, Errors: d.Errors, FewAcks: d.FewAcks, Violations: d.Violations,
		LostUpdates: d.LostUpdates, StaleWritesRejected: d.Rejected, PerMaster: d.PerMaster})
}
