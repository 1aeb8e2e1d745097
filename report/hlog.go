package report

import (
	"io"
	"lockbench/results"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// intervalSeconds is an interval's length, 1 s when it was not stamped.
func intervalSeconds(h *hdrhistogram.Histogram) float64 {
	d := float64(h.EndTimeMs()-h.StartTimeMs()) / 1000
	if d <= 0 {
		return 1
	}
	return d
}

// writePercentiles writes the classic HdrHistogram percentile distribution
// (values in ms, from µs) exactly as HdrHistogram's plotters read it.
func writePercentiles(path string, h *hdrhistogram.Histogram) error {
	return results.WriteFileShared(path, func(w io.Writer) error {
		_, err := h.PercentilesPrint(w, 5, 1000.0)
		return err
	})
}
