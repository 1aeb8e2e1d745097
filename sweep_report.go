package main

import "lockbench/plan"

// buildSweepReport runs the report stage on a finished sweep directory.
func buildSweepReport(dir string, sw *plan.Sweep) int {
	args := []string{dir}
	if sw.Report.SLOP99 > 0 {
		args = append(args, "--slo-p99", sw.Report.SLOP99.String())
	}
	if sw.Report.SLOSuccess > 0 {
		args = append(args, "--slo-success", fmtFloat(sw.Report.SLOSuccess))
	}
	if sw.Report.TargetRate > 0 {
		args = append(args, "--target-rate", fmtFloat(sw.Report.TargetRate))
	}
	for _, t := range sw.Thresholds {
		args = append(args, "--threshold", t)
	}
	return cmdReport(args)
}
