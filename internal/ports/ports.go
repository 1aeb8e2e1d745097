// Package ports finds free loopback ports for the servers lockbench
// starts.
package ports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Free is a TCP port on 127.0.0.1 that nothing listened on a moment ago.
// It is drawn below the kernel's ephemeral range: a port there is given
// to no outgoing connection and no listener on port 0 (the proxies, the
// gates, the hundreds of client sessions of a cell), which would
// otherwise take it between this check and the server's bind. Another
// process may still take it; servers that can report a lost race
// (redis-server) retry with another. No port is handed out twice.
func Free() (int, error) {
	lo, hi := drawRange()
	for range 200 {
		p := lo + rand.IntN(hi-lo)
		if taken(p) {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return ephemeral() // a crowded range: the kernel's pick, as before
}

// drawRange is [10000, the ephemeral range's start), or a fixed one when
// the kernel does not say.
func drawRange() (int, int) {
	lo, hi := 10000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if start, err := strconv.Atoi(f[0]); err == nil && start > lo+1000 {
				hi = start
			}
		}
	}
	return lo, hi
}

var (
	mu     sync.Mutex
	handed = map[int]bool{}
)

// taken says p was handed out before, and marks it.
func taken(p int) bool {
	mu.Lock()
	defer mu.Unlock()
	if handed[p] {
		return true
	}
	handed[p] = true
	return false
}

func ephemeral() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CheckMetricsAddr says whether addr (--metrics-addr, metrics_addr:) is
// HOST:PORT, naming the field; here so that plan checks it without
// importing the metrics server.
func CheckMetricsAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 0 || p > 65535 {
		return fmt.Errorf("metrics-addr: %q is not accepted; use HOST:PORT such as 127.0.0.1:9464 or :9464", addr)
	}
	return nil
}
