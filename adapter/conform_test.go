package adapter_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"lockbench/adapter"
	"lockbench/internal/redistest"
)

// runCheck runs the conformance checks on argv against 3 masters.
func runCheck(t *testing.T, argv []string, addrs []string) ([]adapter.CheckResult, bool, string) {
	t.Helper()
	var out bytes.Buffer
	opt := adapter.CheckOptions{Argv: argv, Servers: addrs, TTL: time.Second, ReplyBound: time.Second,
		DropKey: func(ctx context.Context, key string) error {
			for _, a := range addrs {
				if _, err := redistest.Do(a, "DEL", key); err != nil {
					return err
				}
			}
			return nil
		}}
	rs, ok := adapter.Check(context.Background(), opt, &out)
	t.Log("\n" + out.String())
	return rs, ok, out.String()
}

func verdict(rs []adapter.CheckResult, name string) adapter.CheckResult {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return adapter.CheckResult{}
}

// TestCheckReference: the reference adapter passes every check that
// applies; with the watchdog asked for it claims and passes the lost
// notice.
func TestCheckReference(t *testing.T) {
	rs, ok, out := runCheck(t, []string{reference(t)}, masters(t, 3))
	if !ok || len(rs) != 9 {
		t.Fatalf("the reference adapter did not pass:\n%s", out)
	}
	if v := verdict(rs, "lost notice").Verdict; v != adapter.Pass {
		t.Errorf("lost notice: %s, want PASS (the engine's watchdog tells its holder)", v)
	}
}

// TestCheckFailsBrokenAdapters: each broken adapter fails the check
// that names what it broke, and the run is not ok.
func TestCheckFailsBrokenAdapters(t *testing.T) {
	addrs := masters(t, 3)
	for _, tc := range []struct{ mode, check, seen string }{
		{"two-holders", "two holders on one key", "of 8 acquires at once on one key (two sessions) were granted; want exactly 1"},
		{"wrong-id", "acquire & release", "reply to id"},
		{"hangs", "acquire & release", "stopped answering"},
		{"no-hello", "hello & capabilities", "no hello_ok within"},
		{"prints", "acquire & release", `malformed line "INFO acquiring`},
		{"crash", "acquire & release", "(exit status 3); its last stderr lines: fake adapter: about to crash | panic: boom"},
		{"lost-unknown", "acquire & release", `lost for token "never-granted", which was never granted`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			rs, ok, out := runCheck(t, fake(t, tc.mode), addrs)
			r := verdict(rs, tc.check)
			if ok || r.Verdict != adapter.Fail || !strings.Contains(r.Detail, tc.seen) {
				t.Fatalf("check %q: %s %q, want FAIL with %q; whole run ok=%v:\n%s", tc.check, r.Verdict, r.Detail, tc.seen, ok, out)
			}
		})
	}
}
