package engine

import (
	"fmt"
	"lockbench/internal/redact"
	"lockbench/internal/redisserver"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// ParseMaster turns host:port, redis://[user:pass@]host:port[/db] or
// rediss://… into rueidis options and a display address without secrets.
// Its errors show the input only through RedactURL and quote no piece of it
// on their own (a password holding "/" or "?" would otherwise surface as a
// "port" or a "path").
func ParseMaster(s string) (rueidis.ClientOption, string, error) {
	s = strings.TrimSpace(s)
	shown := RedactURL(s)
	if s == "" {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: empty address; use host:port or redis://[user:pass@]host:port")
	}
	if !strings.Contains(s, "://") {
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" || strings.Contains(s, "@") {
			return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q is not host:port; with a user or password use redis://[user:pass@]host:port", shown)
		}
		if !validPort(port) {
			return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q has no valid port; use 1..65535", shown)
		}
		s = "redis://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q is not host:port, redis://[user:pass@]host:port or rediss://…", shown)
	}
	if _, port, err := net.SplitHostPort(u.Host); err != nil || !validPort(port) {
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q has no valid port; use host:port with a port in 1..65535", shown)
	}
	opt, err := rueidis.ParseURL(s)
	if err != nil {
		// rueidis quotes the path or query it rejects; those hold no
		// userinfo once url.Parse has split it off, but redact anyway.
		return rueidis.ClientOption{}, "", fmt.Errorf("masters: %q: %s", shown, RedactIn(err.Error(), s))
	}
	display := u.Host
	if u.Scheme == "rediss" {
		display = "rediss://" + u.Host
	}
	return opt, display, nil
}

func validPort(port string) bool {
	p, err := strconv.Atoi(port)
	return err == nil && p >= 1 && p <= 65535
}

// RedactURL is s with its userinfo's password hidden (redact.URL).
func RedactURL(s string) string { return redact.URL(s) }

// RedactIn is msg with the address raw and its secrets hidden (redact.In).
func RedactIn(msg, raw string) string { return redact.In(msg, raw) }

// MasterOption is ParseMaster with tls applied to a rediss:// master: what
// every client of that master, the engine's or a side one, starts from.
func MasterOption(addr string, tls TLSFiles) (rueidis.ClientOption, string, error) {
	opt, display, err := ParseMaster(addr)
	if err == nil && opt.TLSConfig != nil && !tls.Empty() {
		opt.TLSConfig, err = tls.Config(opt.TLSConfig.ServerName)
	}
	return opt, display, err
}

// NewSingleClient connects opt as one connection with no client-side cache
// and no cluster discovery (redisserver.NewSingleClient).
func NewSingleClient(opt rueidis.ClientOption) (rueidis.Client, error) {
	return redisserver.NewSingleClient(opt)
}

// clientOption completes parsed options with what the engine relies on.
func clientOption(opt rueidis.ClientOption, timeout, flushDelay time.Duration) rueidis.ClientOption {
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
