package engine

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidateNamesField(t *testing.T) {
	base := DefaultConfig()
	base.Masters = []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	if err := base.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cases := []struct {
		field  string
		mutate func(*Config)
	}{
		{"timeout", func(c *Config) { c.Timeout = c.TTL }},
		{"timeout", func(c *Config) { c.Timeout = 0 }},
		{"ttl", func(c *Config) { c.TTL = 0 }},
		{"masters", func(c *Config) { c.Masters = nil }},
		{"masters", func(c *Config) { c.Masters = []string{"127.0.0.1:1", "127.0.0.1:1"} }},
		{"mode", func(c *Config) { c.Mode = "parallel" }},
		{"wait", func(c *Config) { c.Wait = "some" }},
		{"drift-factor", func(c *Config) { c.DriftFactor = -1 }},
		{"retries", func(c *Config) { c.Retries = -1 }},
		{"retry-delay", func(c *Config) { c.RetryMin, c.RetryMax = time.Second, time.Millisecond }},
	}
	for _, tc := range cases {
		c := base
		c.Masters = append([]string(nil), base.Masters...)
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("%s: got %v, want an error naming %q", tc.field, err, tc.field)
		}
	}
}

func TestParseMaster(t *testing.T) {
	good := map[string]string{
		"127.0.0.1:6379":                     "127.0.0.1:6379",
		"redis://127.0.0.1:7000":             "127.0.0.1:7000",
		"redis://user:secret@127.0.0.1:7001": "127.0.0.1:7001",
		"rediss://127.0.0.1:7002":            "rediss://127.0.0.1:7002",
	}
	for in, want := range good {
		opt, display, err := ParseMaster(in)
		if err != nil || display != want {
			t.Errorf("ParseMaster(%q) = %q, %v; want %q", in, display, err, want)
		}
		if strings.Contains(display, "secret") {
			t.Errorf("display %q leaks the password", display)
		}
		if in == "redis://user:secret@127.0.0.1:7001" && (opt.Username != "user" || opt.Password != "secret") {
			t.Errorf("credentials not parsed: %q/%q", opt.Username, opt.Password)
		}
	}
	for _, bad := range []string{"", "localhost", "127.0.0.1:0", "127.0.0.1:99999", "http://127.0.0.1:1", "redis://:pw@/x"} {
		if _, _, err := ParseMaster(bad); err == nil || !strings.HasPrefix(err.Error(), "masters:") {
			t.Errorf("ParseMaster(%q): got %v, want a masters: error", bad, err)
		}
	}
	if got := RedactURL("redis://u:hunter2@h:1"); strings.Contains(got, "hunter2") {
		t.Errorf("RedactURL kept the password: %s", got)
	}
}

func TestTokensAreUnique(t *testing.T) {
	a, b := newTokenSource(), newTokenSource()
	seen := map[string]bool{}
	for range 10000 {
		for _, tok := range []string{a.next(), b.next()} {
			if seen[tok] {
				t.Fatalf("token %q repeated", tok)
			}
			seen[tok] = true
		}
	}
}
