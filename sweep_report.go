package main

import (
	"time"

	"lockbench/plan"
)

// buildSweepReport runs the report stage on a finished sweep directory with
// the scenario's report: section and thresholds (unset values keep the
// report command's defaults).
func buildSweepReport(dir string, sw *plan.Sweep) error {
	opt := defaultReportOptions()
	if sw.Report.SLOP99 > 0 {
		opt.SLOP99 = time.Duration(sw.Report.SLOP99)
	}
	if sw.Report.SLOSuccess > 0 {
		opt.SLOSuccess = sw.Report.SLOSuccess
	}
	if opt.SLOSuccess > 1 {
		return quietExit(printErr("report", notAccepted("--slo-success", fmtFloat(opt.SLOSuccess), sloSuccessAccepted)))
	}
	if sw.Report.TargetRate > 0 {
		opt.TargetRate = sw.Report.TargetRate
	}
	ths, err := parseThresholds(sw.Thresholds)
	if err != nil {
		return quietExit(printErr("report", usageErr(err)))
	}
	opt.Thresholds = ths
	return reportStage(dir, opt)
}
