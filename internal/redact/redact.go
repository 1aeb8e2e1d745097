// Package redact hides the secrets of a server's address (a URL's
// password) in what lockbench shows: every lock service's addresses and
// the errors that quote them.
package redact

import (
	"net/url"
	"strconv"
	"strings"
)

// URL hides the userinfo of a server address so a password never
// reaches output. It works on the text, not on a parsed URL, because the
// inputs that most need it are the ones url.Parse rejects (a bad escape, a
// password holding "/", "user:pass@host:port" without a scheme): everything
// between the scheme (or the start) and the last "@" is userinfo. The user
// name before the first ":" stays visible; a lone userinfo without ":" may be
// a password, so it is hidden whole.
func URL(s string) string {
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

// In replaces, in a message about the master address raw, the address
// and its userinfo with their redacted form (for errors from libraries that
// quote what they were given).
func In(msg, raw string) string {
	if red := URL(raw); red != raw {
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

// userinfo is what URL hides: the text between the scheme (or the
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
