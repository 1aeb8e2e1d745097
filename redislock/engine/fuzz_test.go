package engine

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseMaster: any input either parses to a usable address or gives a
// "masters:" error; never a panic, never a password in what is shown.
func FuzzParseMaster(f *testing.F) {
	for _, s := range []string{"127.0.0.1:6379", "redis://u:p@127.0.0.1:1/0", "rediss://h:2", "localhost", "redis://[::1]:6379",
		"redis://:pw@h:1", "", "::::", "redis://h:99999", "unix:///tmp/x.sock", "redis://u:p%40ss@h:3?dial_timeout=1s",
		"bench:s3cretpw@127.0.0.1:7000", "redis://bench:s3cretpw@127.0.0.1:7000/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opt, display, err := ParseMaster(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "masters:") {
				t.Fatalf("error without the field name: %v", err)
			}
		} else if display == "" || len(opt.InitAddress) == 0 {
			t.Fatalf("%q parsed to an empty address", s)
		}
		if u, perr := url.Parse(s); perr == nil && u.User != nil {
			pw, ok := u.User.Password()
			if !ok || len(pw) < 4 {
				return
			}
			for what, shown := range map[string]string{"display": display, "RedactURL": RedactURL(s), "error": errText(err)} {
				if strings.Contains(shown, pw) {
					t.Fatalf("%s %q shows the password of %q", what, shown, s)
				}
			}
		}
	})
}

// FuzzMasterSecret builds scheme + user ":" password "@" rest, for inputs
// url.Parse accepts or rejects alike, and checks that no part of the
// password reaches the error, the display address or RedactURL. The
// password is framed by markers the rest of the input does not hold, so a
// leak of either end of it is seen.
func FuzzMasterSecret(f *testing.F) {
	f.Add("redis://", "bench", "s3cretpw", "127.0.0.1:7000/%zz")
	f.Add("", "bench", "s3cretpw", "127.0.0.1:7000")
	f.Add("redis://", "", "pa/ss", "h:1")
	f.Add("rediss://", "u", "p?q#r", "h:99999")
	f.Add("redis://", "u", "p@w", "h:1/0?dial_timeout=zz")
	f.Add("redis://", "u", "pw", "h:1/x")
	f.Fuzz(func(t *testing.T, scheme, user, pw, rest string) {
		const head, tail = "Qz7", "7zQ"
		if strings.ContainsAny(user, ":@") || strings.Contains(rest, "@") {
			return // not a user name, or the password would not be the userinfo
		}
		for _, part := range []string{scheme, user, rest} {
			if strings.Contains(part, "Qz") || strings.Contains(part, "zQ") || strings.Contains(part, "7z") || strings.Contains(part, "z7") {
				return
			}
		}
		s := scheme + user + ":" + head + pw + tail + "@" + rest
		_, display, err := ParseMaster(s)
		for what, shown := range map[string]string{"display": display, "RedactURL": RedactURL(s), "error": errText(err),
			"RedactIn": RedactIn("dial "+s+": refused", s)} {
			if strings.Contains(shown, head) || strings.Contains(shown, tail) {
				t.Fatalf("%s %q shows (part of) the password of %q", what, shown, s)
			}
		}
	})
}

// TestNoPasswordInMasterErrors: the two inputs a user met, echoed whole
// before.
func TestNoPasswordInMasterErrors(t *testing.T) {
	for _, s := range []string{"bench:s3cretpw@127.0.0.1:7000", "redis://bench:s3cretpw@127.0.0.1:7000/%zz",
		"redis://bench:s3cr/etpw@127.0.0.1:7000", "redis://bench:s3cretpw@127.0.0.1:7000/0?dial_timeout=zz"} {
		_, _, err := ParseMaster(s)
		if err == nil {
			t.Fatalf("%q accepted", s)
		}
		if strings.Contains(err.Error(), "s3cr") || strings.Contains(err.Error(), "etpw") {
			t.Fatalf("error shows the password: %v", err)
		}
		t.Log(err)
	}
	if err := (Config{Masters: []string{"redis://u:s3cretpw@h:1", "redis://u:s3cretpw@h:1"}}).Validate(); err == nil || strings.Contains(err.Error(), "s3cretpw") {
		t.Fatalf("duplicate master: %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var b strings.Builder
	for e := err; e != nil; e = errors.Unwrap(e) {
		b.WriteString(e.Error())
	}
	return b.String()
}
