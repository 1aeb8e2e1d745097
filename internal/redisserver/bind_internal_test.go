package redisserver

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// A port taken between freePort and redis binding it must be recognised as a
// bind failure, which is what makes Start retry on a fresh port.
func TestBindFailureDetected(t *testing.T) {
	bin := requireServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	s := New(Config{Bin: bin, Dir: t.TempDir(), Tail: NoPersistence()})
	s.port, s.addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	bindFailed, err := s.run(context.Background())
	if err == nil || !bindFailed {
		t.Fatalf("run on a taken port: bindFailed=%v err=%v", bindFailed, err)
	}
	if !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("error lacks the redis.log tail: %v", err)
	}
}

// requireServer is redis-server's path; a test without it fails under
// LOCKBENCH_REQUIRE_REDIS=1 and is skipped otherwise (redistest's policy,
// by hand: redistest imports this package).
func requireServer(t *testing.T) string {
	t.Helper()
	bin, ok := Path()
	if !ok {
		if os.Getenv("LOCKBENCH_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not installed but LOCKBENCH_REQUIRE_REDIS=1 requires it")
		}
		t.Skip("redis-server not installed")
	}
	return bin
}
