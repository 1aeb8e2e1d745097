package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/redislock/shippedadapters"
)

// Each shipped adapter runs a short contended benchmark cell through
// lockbench run --client on its design's servers: its library and
// capabilities in the result, locks granted and refused, one holder at a
// time, its CPU in the client's. Nothing is timed: the per-master
// timeout is long, so that a busy machine slows the cell without failing
// its commands.
func TestRunClientShipped(t *testing.T) {
	redistest.Require(t)
	for _, tc := range []struct {
		name     string
		argv     func(testing.TB) []string
		servers  []string
		version  string
		validity string
		caps     string
	}{
		{"node-redlock", shippedadapters.NodeRedlock, []string{"--topology", "redlock", "--local", "3"}, "4.2.0", "drift", "extend"},
		{"node-redlock", shippedadapters.NodeRedlock5, []string{"--topology", "redlock", "--local", "3"}, "5.0.0-beta.2", "drift", "auto_extend lost_notice"},
		{"redis-py", shippedadapters.RedisPy, []string{"--topology", "single", "--local", "1"}, "4.3.4", "ttl", "extend"},
	} {
		t.Run(tc.name+"-"+tc.version, func(t *testing.T) {
			args := append([]string{"run"}, tc.servers...)
			args = append(args, "--duration", "2s", "--warmup", "0s", "--workers", "4", "--keys", "2", "--hold", "2ms",
				"--ttl", "2s", "--timeout", "500ms", "--json", "--client", strings.Join(tc.argv(t), " "))
			stdout, stderr, code := lockbench(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var res map[string]any
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatal(err)
			}
			wantRun(t, res, map[string]any{"config.adapter.library": tc.name, "config.adapter.version": tc.version,
				"config.adapter.validity": tc.validity, "safety.violations": 0.0, "safety.max_concurrent_holders": 1.0})
			if caps, _ := lookup(res, "config.adapter.capabilities"); fmt.Sprint(caps) != "["+tc.caps+"]" {
				t.Errorf("capabilities %v, want [%s]", caps, tc.caps)
			}
			acq, _ := lookup(res, "outcomes.acquired")
			refused, _ := lookup(res, "outcomes.not_acquired")
			if acq.(float64) < 10 || refused.(float64) < 1 {
				t.Errorf("acquired %v, not acquired %v on 2 keys and 4 workers; want both", acq, refused)
			}
			checkAdapterCPU(t, res)
		})
	}
}

func wantRun(t *testing.T, res map[string]any, want map[string]any) {
	t.Helper()
	for path, w := range want {
		if got, _ := lookup(res, path); got != w {
			t.Errorf("%s = %v, want %v", path, got, w)
		}
	}
}
