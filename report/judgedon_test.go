package report

import (
	_ "lockbench/etcdlock" // the designs plan names are the registered services'
	_ "lockbench/pglock"
	"lockbench/plan"
	_ "lockbench/redislock"
	_ "lockbench/zklock"
)

// The tests judge not-applicable pairs as lockbench does (whichlock sets
// the same hook).
func init() { JudgedOnOf = plan.MatrixJudgedOnNamed }
