package redsyncdriver

import (
	"context"
	"strings"
	"testing"
	"time"

	"lockbench/engine"
	"lockbench/internal/redistest"
	"lockbench/localmasters"
)

func TestRedsyncDriver(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	cfg.TTL = 2 * time.Second
	d, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	lock, res := d.Acquire(ctx, "rs:key")
	if lock == nil || !res.Acquired || res.Validity <= 0 || !strings.HasPrefix(lock.Token, d.TokenPrefix()) {
		t.Fatalf("acquire: %+v %+v", lock, res)
	}
	for _, a := range set.Addrs() {
		if v, _ := redistest.Do(a, "GET", "rs:key"); v != lock.Token {
			t.Fatalf("%s holds %q, want the driver's token", a, v)
		}
	}
	// A second acquire of the held key fails, and says which masters had it.
	if l2, r2 := d.Acquire(ctx, "rs:key"); l2 != nil || r2.PerMaster[0] != engine.Taken {
		t.Fatalf("second acquire of a held key: %v %v", l2 != nil, r2.PerMaster)
	}
	if rel := d.Release(ctx, lock); !rel.OK {
		t.Fatal("release failed")
	}
	if v, _ := redistest.Do(set.Addrs()[0], "EXISTS", "rs:key"); v != "0" {
		t.Fatal("key left after release")
	}
	cfg.Mode = engine.Sequential
	if _, err := New(context.Background(), cfg); err == nil || !strings.HasPrefix(err.Error(), "mode:") {
		t.Fatalf("sequential with redsync: %v", err)
	}
}
