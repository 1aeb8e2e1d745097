package adapter_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"lockbench/adapter"
	"lockbench/internal/redistest"
	"lockbench/redislock/shippedadapters"
)

// checkShipped runs the conformance checks on a shipped adapter against
// n real masters. Its bound is generous: the checks judge answers, not
// their speed, and the machine is shared.
func checkShipped(t *testing.T, argv []string, n int, topology string) ([]adapter.CheckResult, string) {
	t.Helper()
	addrs := masters(t, n)
	var out bytes.Buffer
	opt := adapter.CheckOptions{Argv: argv, Servers: addrs, TTL: time.Second, ReplyBound: 5 * time.Second, Stderr: t.Output(),
		Settings: map[string]any{"topology": topology},
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
	if !ok {
		t.Fatalf("adapter check failed:\n%s", out.String())
	}
	return rs, out.String()
}

// wantVerdicts: each named check's verdict, and hello's line naming the
// library and its version.
func wantVerdicts(t *testing.T, rs []adapter.CheckResult, out, library string, want map[string]string) {
	t.Helper()
	if d := verdict(rs, "hello & capabilities").Detail; !strings.HasPrefix(d, library+" ") {
		t.Errorf("hello names %q, want %s:\n%s", d, library, out)
	}
	for name, v := range want {
		if got := verdict(rs, name).Verdict; got != v {
			t.Errorf("%s: %s, want %s:\n%s", name, got, v, out)
		}
	}
}

// TestCheckNodeRedlock: node-redlock 4.2.0 on 3 masters passes every
// check it claims (extend); it claims no lost notice.
func TestCheckNodeRedlock(t *testing.T) {
	rs, out := checkShipped(t, shippedadapters.NodeRedlock(t), 3, "redlock")
	wantVerdicts(t, rs, out, "node-redlock 4.2.0", map[string]string{
		"acquire & release": adapter.Pass, "two holders on one key": adapter.Pass, "extend": adapter.Pass,
		"lost notice": adapter.NA, "many in flight": adapter.Pass,
	})
}

// TestCheckNodeRedlock5: node-redlock 5.0.0-beta.2's using() extends
// its lock by itself and tells of a failed extension: it passes the lost
// notice; it claims no extend of its own.
func TestCheckNodeRedlock5(t *testing.T) {
	rs, out := checkShipped(t, shippedadapters.NodeRedlock5(t), 3, "redlock")
	wantVerdicts(t, rs, out, "node-redlock 5.0.0-beta.2", map[string]string{
		"acquire & release": adapter.Pass, "two holders on one key": adapter.Pass, "extend": adapter.NA,
		"lost notice": adapter.Pass, "many in flight": adapter.Pass,
	})
}

// TestCheckRedisPy: redis-py's Lock on one master passes every check
// it claims (extend); many requests in flight are served at once.
func TestCheckRedisPy(t *testing.T) {
	rs, out := checkShipped(t, shippedadapters.RedisPy(t), 1, "single")
	wantVerdicts(t, rs, out, "redis-py 4.3.4", map[string]string{
		"acquire & release": adapter.Pass, "two holders on one key": adapter.Pass, "extend": adapter.Pass,
		"lost notice": adapter.NA, "many in flight": adapter.Pass,
	})
}

// TestRedisPyRefusesManyServers: redis-py's Lock is one server's; hello
// with three answers error, naming why.
func TestRedisPyRefusesManyServers(t *testing.T) {
	argv := shippedadapters.RedisPy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err := adapter.Start(ctx, adapter.Options{Argv: argv, Stderr: t.Output(),
		Hello: adapter.Hello{Servers: []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, TTL: time.Second, MaxFlight: 1}})
	if err == nil || !strings.Contains(err.Error(), "one server's; hello gave 3 servers (use topology single)") {
		t.Fatalf("hello with 3 servers: %v; want an error naming topology single", err)
	}
}
