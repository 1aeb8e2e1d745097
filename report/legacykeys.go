package report

// Output keys that keep the spelling they had when only Redis' servers
// reported their command cost: a script reading cells.csv finds them where
// it did (the JSON keys of the same figures, redis_cost and
// redis_capacity, keep theirs as struct tags). The figures are any
// service's servers'.
const (
	csvCommandCostColumn = "redis_command_us_per_cycle" // server µs of lock commands per cycle
	csvCPUCostColumn     = "redis_cpu_us_per_cycle"     // server process CPU µs per cycle
)
