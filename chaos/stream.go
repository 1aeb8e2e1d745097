package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"lockbench/lock"
	"lockbench/workloads"
)

// A client process prints its counts (workloads.Counts) on stdout once a
// second ("counts {json}") and the parent hands the growth to its
// live-metrics observer. Latencies are not streamed (the result files
// carry them).

// tally is a client process's observer: the workers' counts as they
// happen, read once a second. A mutex, not atomics: the workers' count
// type (workloads.Counts, around the one outcome count results.Tally) is
// counted here as in the worker loop, and a fault cell's clients run at
// hundreds of cycles a second, not millions.
type tally struct {
	mu sync.Mutex
	c  workloads.Counts
}

// servers is how many servers lk reports replies of (none: it reports
// none per server).
func servers(lk lock.Locker) int {
	if ps, ok := lk.(lock.PerServer); ok {
		return len(ps.Addrs())
	}
	return 0
}

func newTally(masters int) *tally {
	return &tally{c: workloads.Counts{PerMaster: make([][lock.NumOutcomes]int64, masters)}}
}

// Fold counts a record as the worker loop does (workloads.Counts.Fold).
// A fault cell's latencies and times to lock reach the parent in the
// clients' interval logs, not live.
func (t *tally) Fold(r *workloads.Record) {
	t.mu.Lock()
	t.c.Fold(r)
	t.mu.Unlock()
}

func (t *tally) AcquireStarted()            {}
func (t *tally) AcquireEnded()              {}
func (t *tally) Started(time.Duration)      {}
func (t *tally) Scheduled(_, _ int64)       {}
func (t *tally) SetWorkers(int)             {}
func (t *tally) AddCounts(workloads.Counts) {}

// counts is a copy of the tally's counts.
func (t *tally) counts() workloads.Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.c
	c.PerMaster = slices.Clone(t.c.PerMaster)
	return c
}

// stream prints the tally on w once a second until stop, then once more.
func (t *tally) stream(w io.Writer, stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-stop:
			t.print(w)
			return
		}
		t.print(w)
	}
}

func (t *tally) print(w io.Writer) {
	b, _ := json.Marshal(t.counts())
	fmt.Fprintf(w, "counts %s\n", b)
}

// readCounts hands the growth of each "counts" line from a client process
// to obs until r ends.
func readCounts(r *bufio.Reader, obs Observer) {
	var last workloads.Counts
	for {
		line, err := r.ReadString('\n')
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "counts "); ok && obs != nil {
			var c workloads.Counts
			if json.Unmarshal([]byte(rest), &c) == nil {
				obs.AddCounts(c.Sub(last))
				last = c
			}
		}
		if err != nil {
			return
		}
	}
}
