package slots

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A server that refuses every session: contenders that take the slot in a
// loop open it a few times (the backoff's steps), not thousands. Bounds
// the opens in 300 ms of tight Takes: the waits' shortest sum (halves of
// 10, 20, 40, 80, 160 ms, then 125 ms each) allows 7, so ≤ 12 has margin;
// a loop without the wait made thousands. Load only lowers the count.
func TestFailedOpensBackOff(t *testing.T) {
	var opens int
	p := New(1, func(context.Context) (int, error) { opens++; return 0, errors.New("refused") }, func(int) bool { return true })
	p.Drop(false) // one empty slot
	end := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(end) {
		if _, err := p.Take(context.Background()); err == nil {
			t.Fatal("Take: want the open's error")
		}
	}
	if opens < 2 || opens > 12 {
		t.Fatalf("%d opens in 300 ms of Takes on a refusing server: want 2 to 12 (backing off from %v to %v)", opens, reopenBase, reopenCap)
	}
}

// A Take waiting out a backoff returns when its caller gives up, and the
// slot keeps its place in the backoff.
func TestBackoffWaitEndsWithTheCaller(t *testing.T) {
	p := New(1, func(context.Context) (int, error) { return 0, errors.New("refused") }, func(int) bool { return true })
	p.ch <- failed[int](20) // next try a jittered [125, 250] ms away
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Take(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Take on a cancelled context: %v", err)
	}
	if s := <-p.ch; s.fails != 20 || s.retryAt.IsZero() {
		t.Fatalf("slot after a cancelled wait: %d fails, retry at %v; want it kept", s.fails, s.retryAt)
	}
}

// A session that opens resets the backoff: its slot, dropped later, opens
// again at once.
func TestOpenResetsBackoff(t *testing.T) {
	fail := true
	p := New(1, func(context.Context) (int, error) {
		if fail {
			return 0, errors.New("refused")
		}
		return 7, nil
	}, func(int) bool { return true })
	p.Drop(false)
	_, _ = p.Take(context.Background())
	fail = false
	v, err := p.Take(context.Background())
	if err != nil || v != 7 {
		t.Fatalf("Take after the server came back: %v, %v", v, err)
	}
	p.Drop(true)
	if s := <-p.ch; s.fails != 0 || !s.retryAt.IsZero() {
		t.Fatalf("dropped slot: %d fails, retry at %v; want none", s.fails, s.retryAt)
	}
}
