package engine

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParseMaster: any input either parses to a usable address or gives a
// "masters:" error; never a panic, never a password in what is shown.
func FuzzParseMaster(f *testing.F) {
	for _, s := range []string{"127.0.0.1:6379", "redis://u:p@127.0.0.1:1/0", "rediss://h:2", "localhost", "redis://[::1]:6379",
		"redis://:pw@h:1", "", "::::", "redis://h:99999", "unix:///tmp/x.sock", "redis://u:p%40ss@h:3?dial_timeout=1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opt, display, err := ParseMaster(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "masters:") {
				t.Fatalf("error without the field name: %v", err)
			}
			return
		}
		if display == "" || len(opt.InitAddress) == 0 {
			t.Fatalf("%q parsed to an empty address", s)
		}
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(display, pw) {
				t.Fatalf("display %q shows the password", display)
			}
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(RedactURL(s), pw) {
				t.Fatalf("RedactURL(%q) shows the password", s)
			}
		}
	})
}
