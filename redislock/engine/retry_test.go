package engine

import (
	"strings"
	"testing"
	"time"
)

// notify-timeout must be positive with notify (one line naming it).
func TestNotifyValidation(t *testing.T) {
	c := DefaultConfig()
	c.Masters, c.Strategy = []string{"127.0.0.1:1"}, StrategyNotify
	if err := c.Validate(); err != nil || c.NotifyTimeout != c.TTL {
		t.Fatalf("notify with defaults: %v, timeout %v; want accepted, the ttl", err, c.NotifyTimeout)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		c.NotifyTimeout = d
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "notify-timeout: "+d.String()+" is not accepted; use a positive duration") || strings.Contains(err.Error(), "\n") {
			t.Errorf("notify-timeout %v: %v", d, err)
		}
	}
	c.Strategy = StrategyRetry // the timeout is notify's alone
	if err := c.Validate(); err != nil {
		t.Errorf("retry with notify-timeout 0: %v", err)
	}
}
