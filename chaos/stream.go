package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"lockbench/engine"
	"lockbench/lock"
	"lockbench/results"
	"lockbench/workloads"
)

// A client process prints its counts (workloads.Counts) on stdout once a
// second ("counts {json}") and the parent hands the growth to its
// live-metrics observer. Latencies are not streamed (the result files
// carry them).

// tally is a client process's observer: atomic counts, read once a second.
type tally struct {
	cycles, notAcquired, errors, fewAcks, violations, lost, rejected atomic.Int64
	perMaster                                                        [][engine.NumOutcomes]atomic.Int64
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
	return &tally{perMaster: make([][engine.NumOutcomes]atomic.Int64, masters)}
}

func (t *tally) AcquireStarted()       {}
func (t *tally) AcquireEnded()         {}
func (t *tally) Extended(bool)         {}
func (t *tally) Started(time.Duration) {}
func (t *tally) Scheduled(_, _ int64)  {}

// Waited: a fault cell's times to lock reach the parent in the clients'
// interval logs, not live.
func (t *tally) Waited(time.Duration, bool) {}
func (t *tally) SetWorkers(int)             {}
func (t *tally) Violation()                 { t.violations.Add(1) }
func (t *tally) LostUpdates(n int64)        { t.lost.Add(n) }
func (t *tally) StaleWriteRejected()        { t.rejected.Add(1) }
func (t *tally) AddCounts(workloads.Counts) {}

func (t *tally) Cycle(_, _, _ time.Duration, perMaster []engine.Outcome) {
	t.cycles.Add(1)
	t.replied(perMaster)
}

func (t *tally) Failed(_ time.Duration, perMaster []engine.Outcome, why results.AcquireFailure) {
	switch why {
	case results.LostToContention:
		t.notAcquired.Add(1)
	case results.LostToFewAcks:
		t.fewAcks.Add(1)
	default:
		t.errors.Add(1)
	}
	t.replied(perMaster)
}

func (t *tally) replied(perMaster []engine.Outcome) {
	for m, o := range perMaster {
		if m < len(t.perMaster) && o < engine.NumOutcomes {
			t.perMaster[m][o].Add(1)
		}
	}
}

// counts is the one view of the atomic tally as counts.
func (t *tally) counts() workloads.Counts {
	c := workloads.Counts{Acquired: t.cycles.Load(), NotAcquired: t.notAcquired.Load(), Errors: t.errors.Load(), FewAcks: t.fewAcks.Load(),
		Violations: t.violations.Load(), LostUpdates: t.lost.Load(), StaleWritesRejected: t.rejected.Load(),
		PerMaster: make([][engine.NumOutcomes]int64, len(t.perMaster))}
	for m := range t.perMaster {
		for o := range t.perMaster[m] {
			c.PerMaster[m][o] = t.perMaster[m][o].Load()
		}
	}
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
