package localmasters

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// A port taken between freePort and redis binding it must be recognised as a
// bind failure, which is what makes startFirst retry on a fresh port.
func TestBindFailureDetected(t *testing.T) {
	bin, ok := RedisServerPath()
	if !ok {
		// Cannot use redistest here (import cycle); same policy by hand.
		if os.Getenv("LOCKBENCH_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not installed but LOCKBENCH_REQUIRE_REDIS=1 requires it")
		}
		t.Skip("redis-server not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	s := &Set{bin: bin, persist: PersistNone, stopping: make(chan struct{})}
	m := s.newMaster(t.TempDir(), spec{})
	m.port, m.addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	m.mu.Lock()
	bindFailed, err := m.runLocked(context.Background())
	m.mu.Unlock()
	if err == nil || !bindFailed {
		t.Fatalf("runLocked on a taken port: bindFailed=%v err=%v", bindFailed, err)
	}
	if !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("error lacks the redis.log tail: %v", err)
	}
}
