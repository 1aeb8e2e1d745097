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

// RedactURL hides the userinfo of a master address so a password never
// reaches output. It works on the text, not on a parsed URL, because the
// inputs that most need it are the ones url.Parse rejects (a bad escape, a
// password holding "/", "user:pass@host:port" without a scheme): everything
// between the scheme (or the start) and the last "@" is userinfo. The user
// name before the first ":" stays visible; a lone userinfo without ":" may be
// a password, so it is hidden whole.
func RedactURL(s string) string {
	rest, scheme := s, ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, rest = s[:i+3], s[i+3:]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		user = ""
	}
	return scheme + user + ":xxxxx" + rest[at:]
}

// RedactIn replaces, in a message about the master address raw, the address
// and its userinfo with their redacted form (for errors from libraries that
// quote what they were given).
func RedactIn(msg, raw string) string {
	if red := RedactURL(raw); red != raw {
		msg = strings.ReplaceAll(msg, raw, red)
		info := userinfo(raw)
		_, pass, _ := strings.Cut(info, ":")
		for _, secret := range []string{info, pass, url.PathEscape(pass), strconv.Quote(pass)} {
			if secret != "" && secret != `""` {
				msg = strings.ReplaceAll(msg, secret, "xxxxx")
			}
		}
	}
	return msg
}

// userinfo is what RedactURL hides: the text between the scheme (or the
// start) and the last "@".
func userinfo(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		return s[:at]
	}
	return ""
}

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
// and no cluster discovery (a master is one server): the engine's links and
// every side connection to a master (checks, INFO, CONFIG) alike.
func NewSingleClient(opt rueidis.ClientOption) (rueidis.Client, error) {
	opt.ForceSingleClient, opt.DisableCache = true, true
	c, err := rueidis.NewClient(opt)
	if err != nil && c != nil {
		// ForceSingleClient hands back a client even when its dial failed.
		c.Close()
		return nil, err
	}
	return c, err
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
