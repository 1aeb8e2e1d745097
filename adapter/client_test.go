package adapter_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestReferenceAcquireRelease drives the reference adapter as a Locker:
// one holder on a key at a time, the second refused, validity on
// lockbench's clock within the TTL, release then acquire again.
func TestReferenceAcquireRelease(t *testing.T) {
	c := startRef(t, masters(t, 3), time.Second, 0, map[string]any{"topology": "redlock", "mode": "multiplexed"})
	if h := c.Hello(); h.Library.Name != "lockbench-engine" || !h.Capabilities.Extend || h.Validity.Method != "drift" {
		t.Fatalf("hello_ok: %+v", h)
	}
	ctx := context.Background()
	l, res := c.Acquire(ctx, "k")
	if l == nil || !res.Acquired || res.Validity <= 0 || res.Validity > time.Second {
		t.Fatalf("first acquire: %+v %+v", l, res)
	}
	if l2, res2 := c.Acquire(ctx, "k"); l2 != nil || !res2.Taken {
		t.Fatalf("second acquire while held: %+v %+v", l2, res2)
	}
	if r := c.Release(ctx, l); !r.OK {
		t.Fatalf("release: %+v", r)
	}
	if r := c.Release(ctx, l); r.OK {
		t.Fatalf("second release of the same lock: %+v", r)
	}
	l, res = c.Acquire(ctx, "k")
	if l == nil {
		t.Fatalf("acquire after release: %+v", res)
	}
	if r := c.Extend(ctx, l, 2*time.Second); !r.OK || r.Validity <= time.Second {
		t.Fatalf("extend: %+v", r)
	}
	c.Release(ctx, l)
}

// TestReferenceManyInFlight: 32 workers on 4 keys, never two holders of
// one key at once as lockbench sees them.
func TestReferenceManyInFlight(t *testing.T) {
	c := startRef(t, masters(t, 3), 2*time.Second, 200*time.Millisecond, map[string]any{"retry_delay_min_ms": 1, "retry_delay_max_ms": 5})
	var mu sync.Mutex
	holders := map[string]int{}
	var wg sync.WaitGroup
	var won, overlap int
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := string(rune('a' + w%4))
			for range 20 {
				l, _ := c.Acquire(context.Background(), key)
				if l == nil {
					continue
				}
				mu.Lock()
				holders[key]++
				won++
				if holders[key] > 1 {
					overlap++
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				holders[key]--
				mu.Unlock()
				c.Release(context.Background(), l)
			}
		}()
	}
	wg.Wait()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if won == 0 || overlap > 0 {
		t.Fatalf("won %d, overlapping holds %d", won, overlap)
	}
	t.Logf("won %d of %d acquires", won, 32*20)
}
