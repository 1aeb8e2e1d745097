package pglock

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"lockbench/internal/ports"
)

// link is a standby's replication connection to its primary, through a
// TCP forwarder lockbench owns on loopback, so that it can be cut
// (replication_lag). Cut closes every connection through it and, until
// Restore, closes each new one at once: the standby's WAL receiver, which
// tries again every wal_retrieve_retry_interval, receives nothing the
// primary writes after the cut. Pausing the standby's replay would not do:
// WAL received but not replayed is replayed at the promotion.
type link struct {
	ln       net.Listener
	upstream string

	mu      sync.Mutex
	cut     bool
	closed  bool
	conns   map[net.Conn]struct{} // both ends of every forwarded connection
	refused int                   // connections closed at once while cut
	wg      sync.WaitGroup
}

// dialTimeout bounds the forwarder's connection to the primary.
const dialTimeout = 5 * time.Second

// newLink forwards a free loopback port to upstream.
func newLink(upstream string) (*link, error) {
	var ln net.Listener
	var err error
	for range 5 { // another process may take the free port first
		var port int
		if port, err = ports.Free(); err != nil {
			return nil, err
		}
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.serve()
	return l, nil
}

// Port is the port the standby connects to.
func (l *link) Port() int { return l.ln.Addr().(*net.TCPAddr).Port }

func (l *link) serve() {
	defer l.wg.Done()
	for {
		down, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // a transient accept error (EMFILE): go on
			continue
		}
		l.mu.Lock()
		if l.cut || l.closed {
			l.refused++
			l.mu.Unlock()
			down.Close()
			continue
		}
		l.conns[down] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.forward(down)
	}
}

// forward dials the primary for down and copies both ways until either
// side ends or a cut closes both.
func (l *link) forward(down net.Conn) {
	defer l.wg.Done()
	up, err := net.DialTimeout("tcp", l.upstream, dialTimeout)
	l.mu.Lock()
	if err != nil || l.cut || l.closed { // cut while dialling: nothing crosses
		delete(l.conns, down)
		l.mu.Unlock()
		down.Close()
		if up != nil {
			up.Close()
		}
		return
	}
	l.conns[up] = struct{}{}
	l.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, down)
	go pipe(down, up)
	<-done
	l.drop(up, down) // one side ended: end the other
	<-done
}

// drop closes connections and forgets them.
func (l *link) drop(cs ...net.Conn) {
	l.mu.Lock()
	for _, c := range cs {
		delete(l.conns, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

// Cut closes every connection through the link, and each new one until
// Restore; it returns how many connections it closed (both ends of each).
// Once it returned, nothing the primary sends reaches the standby.
func (l *link) Cut() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	n := len(l.conns)
	for c := range l.conns {
		c.Close()
		delete(l.conns, c)
	}
	return n
}

// Restore lets new connections through again.
func (l *link) Restore() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
}

// State says whether the link is cut, and how many connections it
// closed at once while cut (the standby's attempts to reconnect).
func (l *link) State() (cut bool, refused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cut, l.refused
}

// Close stops the forwarder and ends its connections.
func (l *link) Close() error {
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
		delete(l.conns, c)
	}
	l.mu.Unlock()
	err := l.ln.Close()
	l.wg.Wait()
	return err
}
