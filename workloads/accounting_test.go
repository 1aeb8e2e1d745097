package workloads_test

import (
	"context"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/workloads"
)

// Issue 10.5: for measured acquires, each master's columns add up:
// ok + taken + timeout + error + pending = SETs sent, and sent + not_sent
// = measured acquires, in both modes under wait=quorum with a slow master.
func TestPerMasterColumnsAddUp(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	slow := set.Masters()[4]
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the fifth master answers in bursts, so quorum decides without it
		for {
			select {
			case <-stop:
				_ = slow.Resume()
				return
			case <-time.After(5 * time.Millisecond):
				_ = slow.Pause()
				time.Sleep(4 * time.Millisecond)
				_ = slow.Resume()
			}
		}
	}()
	for _, mode := range []engine.Mode{engine.Multiplexed, engine.Sequential} {
		cfg := engine.DefaultConfig()
		cfg.Masters, cfg.Mode, cfg.Wait, cfg.Timeout = set.Addrs(), mode, engine.WaitQuorum, 200*time.Millisecond
		e, err := engine.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 16})
		st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
			Workers: 16, Duration: 600 * time.Millisecond, Warmup: 200 * time.Millisecond,
			Keys: workloads.Keys{Prefix: "lockbench:acct:", Count: 16}, Chooser: ch, Seed: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond) // late replies come in
		r := st.Result(workloads.RepliesOf(e), nil, time.Now())
		e.Close()
		total := r.Outcomes.Acquired + r.Outcomes.NotAcquired + r.Outcomes.Errors
		if total < 50 {
			t.Fatalf("%s: %d measured acquires; too few to judge", mode, total)
		}
		var pending, notSent int64
		for addr, m := range r.Outcomes.PerMaster {
			t.Logf("%s %s: %+v", mode, addr, m)
			if m.Sent()+m.NotSent != total {
				t.Errorf("%s %s: ok+taken+timeout+error+pending = %d, + not_sent %d ≠ %d measured acquires", mode, addr, m.Sent(), m.NotSent, total)
			}
			pending += m.Pending
			notSent += m.NotSent
		}
		if mode == engine.Multiplexed && (pending == 0 || notSent != 0) {
			t.Errorf("multiplexed quorum with a slow master: pending %d (want > 0), not sent %d (want 0)", pending, notSent)
		}
		if mode == engine.Sequential && notSent == 0 {
			t.Errorf("sequential quorum decides after 3 of 5: not sent %d, want > 0", notSent)
		}
	}
}
