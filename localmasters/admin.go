package localmasters

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrNil is returned by Do for a nil bulk reply (for example GET of a missing key).
var ErrNil = errors.New("redis: nil reply")

// RedisError is an error reply ("-ERR ...") from the server.
type RedisError string

func (e RedisError) Error() string { return "redis: " + string(e) }

// Do sends one command on a fresh connection and returns the reply as a
// string (simple string, bulk string or integer). It is a minimal RESP2
// client for health checks and tests, deliberately independent of the client
// under benchmark; array replies are not supported. ctx bounds the whole
// exchange, which is how a paused master is detected.
func Do(ctx context.Context, addr string, args ...string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("localmasters.Do: no command")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// Unblock reads on cancellation too, not only on the deadline.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return "", ctxErr(ctx, err)
	}
	s, err := readReply(bufio.NewReader(conn))
	return s, ctxErr(ctx, err)
}

// ctxErr prefers the context's error so callers can test for DeadlineExceeded.
func ctxErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var re RedisError
	if errors.Is(err, ErrNil) || errors.As(err, &re) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	// The conn deadline is the ctx deadline and may fire a hair before the
	// ctx timer does; report it the same way.
	if _, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}

func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("redis: empty reply line")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", RedisError(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", fmt.Errorf("redis: bad bulk length %q", line)
		}
		if n < 0 {
			return "", ErrNil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("redis: unsupported reply %q", line)
}

// Ping returns nil when addr answers PING with PONG before ctx ends.
func Ping(ctx context.Context, addr string) error {
	s, err := Do(ctx, addr, "PING")
	if err != nil {
		return err
	}
	if s != "PONG" {
		return fmt.Errorf("redis: PING answered %q", s)
	}
	return nil
}
