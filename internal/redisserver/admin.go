package redisserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// ErrNil is Do's error for a nil reply (for example GET of a missing key).
var ErrNil error = rueidis.Nil

// Do sends one command on a fresh rueidis connection and returns the reply
// as a string (simple or bulk string, integer in decimal); array replies are
// not supported. ctx's deadline bounds the connection and its handshake as
// well as the command, which is how a paused master is detected.
func Do(ctx context.Context, addr string, args ...string) (string, error) {
	m, err := DoMessage(ctx, addr, args...)
	if err != nil {
		return "", err
	}
	if m.IsInt64() {
		n, _ := m.AsInt64()
		return strconv.FormatInt(n, 10), nil
	}
	return m.ToString()
}

// DoMessage is Do's raw reply, for array and map answers (Sentinel's,
// CLUSTER SLOTS).
func DoMessage(ctx context.Context, addr string, args ...string) (rueidis.RedisMessage, error) {
	if len(args) == 0 {
		return rueidis.RedisMessage{}, errors.New("redisserver.Do: no command")
	}
	c, err := dial(ctx, addr)
	if err != nil {
		return rueidis.RedisMessage{}, ctxErr(ctx, err)
	}
	defer c.Close()
	m, err := c.Do(ctx, c.B().Arbitrary(args...).Build()).ToMessage()
	if err != nil {
		return m, ctxErr(ctx, err)
	}
	return m, nil
}

// ctxErr prefers the context's error so callers can test for DeadlineExceeded.
func ctxErr(ctx context.Context, err error) error {
	if _, isRedis := rueidis.IsRedisErr(err); isRedis || rueidis.IsRedisNil(err) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	// The dial timeout is the ctx deadline and may fire a hair before the
	// ctx timer does; report it the same way.
	if _, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}

// dial connects to addr. rueidis dials and says HELLO before it takes a
// context, so its dial timeout is what is left of ctx (rueidis' default
// without a deadline).
func dial(ctx context.Context, addr string) (rueidis.Client, error) {
	timeout := rueidis.DefaultDialTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if ctx.Err() != nil || timeout <= 0 {
		return nil, cmp.Or(ctx.Err(), context.DeadlineExceeded)
	}
	return NewSingleClient(rueidis.ClientOption{
		InitAddress: []string{addr},
		Dialer:      net.Dialer{Timeout: timeout},
		// A master still loading its AOF answers -LOADING: waitReady must
		// see it (PONG means loaded) rather than rueidis retry it.
		DisableRetry: true,
		// RESP3 sends INFO as a verbatim string ("txt:# Server…"); RESP2
		// gives callers the plain text.
		AlwaysRESP2: true,
	})
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

// NewSingleClient connects opt as one connection with no client-side cache
// and no cluster discovery (a master is one server): the engine's links and
// every side connection to a master (checks, INFO, CONFIG) alike.
func NewSingleClient(opt rueidis.ClientOption) (rueidis.Client, error) {
	opt.ForceSingleClient, opt.DisableCache = true, true
	c, err := rueidis.NewClient(opt)
	if err != nil && c != nil {
		// ForceSingleClient hands back a client even when its dial failed.
		c.Close()
		return nil, err
	}
	return c, err
}

// ParseInfo reads INFO's "name:value" lines; section headers ("# Server")
// and blank lines have no ":" and carry no field.
func ParseInfo(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if name, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[name] = v
		}
	}
	return out
}
