package engine

import "lockbench/lock"

// The wait strategies: how a caller waits between attempts (package
// lock's, which every lock client shares).
const (
	StrategyRetry   = lock.StrategyRetry
	StrategyBackoff = lock.StrategyBackoff
	StrategySpin    = lock.StrategySpin
	StrategyNotify  = lock.StrategyNotify
)

// WaitStrategies lists them.
var WaitStrategies = lock.WaitStrategies

// RetryPolicy is the acquire loop's terms (lock.RetryPolicy); Subscription
// a notify waiter's hold on a key's release messages.
type (
	RetryPolicy  = lock.RetryPolicy
	Subscription = lock.Subscription
)

// Retry is the policy of c's retry and wait settings.
func (c Config) Retry() RetryPolicy {
	return RetryPolicy{Retries: c.Retries, Min: c.RetryMin, Max: c.RetryMax, Strategy: c.Strategy,
		Base: c.BackoffBase, Cap: c.BackoffCap, WaitTime: c.WaitTime, NotifyTimeout: c.NotifyTimeout}
}
