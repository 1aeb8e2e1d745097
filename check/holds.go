package check

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Hold is one client's use of one lock as the client logged it: its own
// clock readings and the lock settings it asked for, nothing the engine
// under test computed. The checker derives the validity window from these,
// so an engine that overstates (or understates) its validity cannot hide an
// overlap. All processes share this machine's wall clock.
type Hold struct {
	Key         uint64
	T1          int64   // Unix ns just before the acquire was called: the algorithm's t1
	Elapsed     int64   // ns from T1 until the acquire returned
	Used        int64   // Unix ns when the holder stopped using the lock
	TTL         int64   // ns, as asked for
	DriftFactor float64 // as configured; the drift time is TTL × factor + 2 ms
	Client      int
	// The critical section, for the history checks: which worker of the
	// client, when it read (Begin) and its write returned (End), the
	// history it read (its length and last id), the write's id and what
	// became of it (0 outcome: no section, the read failed or was refused).
	Worker     int
	Begin, End int64
	Read       int64
	ReadLast   string
	ID         string
	Outcome    Outcome
}

// Op is the hold's critical section; false when it had none.
func (h Hold) Op() (Op, bool) {
	return Op{Key: h.Key, Client: h.Client, Worker: h.Worker, Begin: h.Begin, End: h.End, Read: h.Read, ReadLast: h.ReadLast,
		ID: h.ID, Outcome: h.Outcome}, h.Outcome != 0
}

// Window is the span in which the hold counts: from the end of the acquire
// to the end of its use or of the validity the algorithm grants, whichever
// is first. The validity ends at t1 + TTL − drift, drift = TTL × factor +
// 2 ms (validity = TTL − elapsed − drift counts from the end of the
// acquire). ok is false when no validity was left when the acquire
// returned: such a hold cannot be judged.
func (h Hold) Window() (start, end int64, ok bool) {
	start = h.T1 + h.Elapsed
	end = min(h.Used, h.ValidEnd())
	return start, end, end > start
}

// Use is the span in which the holder used its lock: from the return of its
// acquire to its release call, whatever the lock promised. A holder that
// checked its lock before writing, found it expired or lost and wrote
// nothing (Skipped) kept to the promise: its use ends with its validity
// (the time it slept past that did nothing under the lock). ok is false
// for a hold used not at all.
func (h Hold) Use() (start, end int64, ok bool) {
	start, end = h.T1+h.Elapsed, h.Used
	if h.Outcome == Skipped {
		end = min(end, h.ValidEnd())
	}
	return start, end, end > start
}

// ValidEnd is when the validity the algorithm grants ends: t1 + TTL − drift.
// The checker's own formula, on purpose not the engine's.
func (h Hold) ValidEnd() int64 {
	drift := int64(float64(h.TTL)*h.DriftFactor) + int64(2*time.Millisecond)
	return h.T1 + h.TTL - drift
}

// HoldLog batches holds and appends them to the resource's hold log.
type HoldLog struct {
	r      *Resource
	client int
	mu     sync.Mutex
	buf    []string
	err    error
	done   chan struct{}
	wg     sync.WaitGroup
}

func NewHoldLog(r *Resource, client int) *HoldLog {
	l := &HoldLog{r: r, client: client, done: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.flush()
			case <-l.done:
				l.flush()
				return
			}
		}
	}()
	return l
}

func (l *HoldLog) Add(h Hold) {
	outcome := "-"
	if h.Outcome != 0 {
		outcome = string(h.Outcome)
	}
	s := strings.Join([]string{strconv.FormatUint(h.Key, 10), strconv.FormatInt(h.T1, 10), strconv.FormatInt(h.Elapsed, 10),
		strconv.FormatInt(h.Used, 10), strconv.FormatInt(h.TTL, 10), strconv.FormatFloat(h.DriftFactor, 'g', -1, 64), strconv.Itoa(l.client),
		strconv.Itoa(h.Worker), strconv.FormatInt(h.Begin, 10), strconv.FormatInt(h.End, 10), strconv.FormatInt(h.Read, 10), outcome,
		orNoID(h.ReadLast), orNoID(h.ID)}, " ")
	l.mu.Lock()
	l.buf = append(l.buf, s)
	l.mu.Unlock()
}

func (l *HoldLog) flush() {
	l.mu.Lock()
	batch := l.buf
	l.buf = nil
	l.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), 10_000)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := l.r.c.Do(ctx, l.r.c.B().Rpush().Key(l.r.key("holds")).Element(batch[:n]...).Build()).Error()
		cancel()
		if err != nil {
			l.mu.Lock()
			if l.err == nil {
				l.err = fmt.Errorf("hold log: %w", err)
			}
			l.mu.Unlock()
			return
		}
		batch = batch[n:]
	}
}

// close writes what is left and reports the first error.
func (l *HoldLog) Close() error {
	close(l.done)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func parseHold(s string) (Hold, error) {
	f := strings.Fields(s)
	if len(f) != 14 {
		return Hold{}, fmt.Errorf("resource: hold log entry %q is not %s", s, holdFormat)
	}
	var h Hold
	var errs [12]error
	h.ReadLast, h.ID = fromNoID(f[12]), fromNoID(f[13])
	h.Key, errs[0] = strconv.ParseUint(f[0], 10, 64)
	h.T1, errs[1] = strconv.ParseInt(f[1], 10, 64)
	h.Elapsed, errs[2] = strconv.ParseInt(f[2], 10, 64)
	h.Used, errs[3] = strconv.ParseInt(f[3], 10, 64)
	h.TTL, errs[4] = strconv.ParseInt(f[4], 10, 64)
	h.DriftFactor, errs[5] = strconv.ParseFloat(f[5], 64)
	h.Client, errs[6] = strconv.Atoi(f[6])
	h.Worker, errs[7] = strconv.Atoi(f[7])
	h.Begin, errs[8] = strconv.ParseInt(f[8], 10, 64)
	h.End, errs[9] = strconv.ParseInt(f[9], 10, 64)
	h.Read, errs[10] = strconv.ParseInt(f[10], 10, 64)
	if o, ok := outcomes[f[11][0]]; ok && len(f[11]) == 1 {
		h.Outcome = o
	} else if f[11] != "-" {
		errs[11] = fmt.Errorf("outcome %q", f[11])
	}
	if err := errors.Join(errs[:]...); err != nil {
		return Hold{}, fmt.Errorf("resource: hold log entry %q is not %s", s, holdFormat)
	}
	return h, nil
}

const holdFormat = `"key t1 elapsed used ttl drift_factor client worker begin end read outcome read_last id"`

// orNoID logs an empty id as NoID (the log's fields are separated by
// spaces); fromNoID reads it back.
func orNoID(id string) string {
	if id == "" {
		return NoID
	}
	return id
}

func fromNoID(f string) string {
	if f == NoID {
		return ""
	}
	return f
}
