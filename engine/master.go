package engine

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// ParseMaster turns host:port, redis://[user:pass@]host:port[/db] or
// rediss://… into rueidis options and a display address without secrets.
func ParseMaster(s string) (rueidis.ClientOption, string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: empty address; use host:port or redis://[user:pass@]host:port")
	}
	if !strings.Contains(s, "://") {
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" {
			return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q is not host:port or a redis:// URL", s)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q has port %q; use 1..65535", s, port)
		}
		s = "redis://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q is not host:port, redis://[user:pass@]host:port or rediss://…", RedactURL(s))
	}
	if _, port, err := net.SplitHostPort(u.Host); err != nil {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q has no port; use host:port", RedactURL(s))
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q has port %q; use 1..65535", RedactURL(s), port)
	}
	opt, err := rueidis.ParseURL(s)
	if err != nil {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q: %v", RedactURL(s), err)
	}
	display := u.Host
	if u.Scheme == "rediss" {
		display = "rediss://" + u.Host
	}
	return opt, display, nil
}

// RedactURL hides a password in a master URL so it never reaches output.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// clientOption completes parsed options with what the engine relies on.
func clientOption(opt rueidis.ClientOption, timeout, flushDelay time.Duration) rueidis.ClientOption {
	// One connection per master, no client-side cache, no cluster discovery.
	opt.ForceSingleClient = true
	opt.DisableCache = true
	// In synchronous mode a context deadline closes the connection; with
	// background pipelining a late reply is dropped and the connection stays.
	opt.AlwaysPipelining = true
	opt.PipelineMultiplex = -1
	// A retry would hide a master's failure from the timing.
	opt.DisableRetry = true
	opt.MaxFlushDelay = flushDelay
	if opt.Dialer.Timeout == 0 {
		opt.Dialer.Timeout = max(timeout, time.Second)
	}
	return opt
}
