// Package ports finds free loopback ports for the servers lockbench
// starts.
package ports

import (
	"fmt"
	"net"
)

// Free is a TCP port on 127.0.0.1 that nothing listened on a moment ago.
// Another process may take it before the server binds; servers that can
// report a lost race (redis-server) retry with another.
func Free() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
