// Package check judges a fault cell from the outside of the lock: the
// protected resource the clients read and write under the lock (a counter
// per lock key on a redis-server of its own), the hold log they keep there,
// and what both show: overlapping holds, lost updates, stale writes
// refused. It knows no lock client.
package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// The protected resource lives in its own redis-server, shared by every
// client process: per lock key a counter that holders read, then (after
// the hold) write back plus one. Acknowledgements are counted by the server
// in the same script as the write, so "acknowledged" is exact.
//
// Keys under the cell's prefix P:
//
//	P res:K      the counter protected by lock key K
//	P hi:K       fencing: the highest token the resource has seen for K
//	P fence      fencing: the token counter (INCR per acquire)
//	P acks       writes applied
//	P rej:w      fenced writes refused (stale token)
//	P rej:r      fenced reads refused (stale token)
//	P holds      the hold log: "K t1 elapsed used ttl drift_factor client worker begin end read outcome" per hold (ns)
//	P lost:s     hash: second of the cell → lost updates seen by writes then
//	P rej:w:s    hash: second of the cell → fenced writes refused then
//
// A write that read v and finds c on the counter overwrites c−v writes
// acknowledged since its read: those are lost. Summed over all writes this
// is exactly acks − final sum (each write moves the counter by v+1−c), so
// the per-second series adds up to the lost-update total.
type Resource struct {
	c      rueidis.Client
	prefix string
}

var (
	// writeScript applies a write and acknowledges it atomically; it
	// returns the writes it overwrote (see Resource).
	writeScript = rueidis.NewLuaScript(`
local lost = tonumber(redis.call('GET', KEYS[1]) or '0') - (tonumber(ARGV[1]) - 1)
redis.call('SET', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[2])
if lost ~= 0 then redis.call('HINCRBY', KEYS[3], ARGV[2], lost) end
return lost`)
	// fencedReadScript refuses a reader whose token is older than one the
	// resource has seen, and otherwise records the token: a later write
	// with an older token is then refused too, so no write can land
	// between a reader's read and its write.
	fencedReadScript = rueidis.NewLuaScript(`
local hi = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < hi then redis.call('INCR', KEYS[3]) return -1 end
if t > hi then redis.call('SET', KEYS[2], ARGV[1]) end
return tonumber(redis.call('GET', KEYS[1]) or '0')`)
	// fencedWriteScript refuses a write whose token is older than one seen;
	// it returns {applied, writes overwritten}.
	fencedWriteScript = rueidis.NewLuaScript(`
local hi = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[2])
if t < hi then
  redis.call('INCR', KEYS[4])
  redis.call('HINCRBY', KEYS[6], ARGV[3], 1)
  return {0, 0}
end
if t > hi then redis.call('SET', KEYS[2], ARGV[2]) end
local lost = tonumber(redis.call('GET', KEYS[1]) or '0') - (tonumber(ARGV[1]) - 1)
redis.call('SET', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[3])
if lost ~= 0 then redis.call('HINCRBY', KEYS[5], ARGV[3], lost) end
return {1, lost}`)
)

// recordScript files a write made elsewhere (a lock service's guarded
// write) as writeScript files its own: applied, the counter's mirror
// keeps the highest value written (the guard serializes the service's
// writes, so that is its final value), the write is acknowledged and the
// writes it overwrote (prev − (v − 1), from the service's own answer)
// counted; refused, counted with the fenced writes refused.
var recordScript = rueidis.NewLuaScript(`
if ARGV[4] == '0' then
  redis.call('INCR', KEYS[4])
  redis.call('HINCRBY', KEYS[5], ARGV[3], 1)
  return 0
end
if tonumber(ARGV[1]) > tonumber(redis.call('GET', KEYS[1]) or '0') then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('INCR', KEYS[2])
local lost = tonumber(ARGV[2]) - (tonumber(ARGV[1]) - 1)
if lost ~= 0 then redis.call('HINCRBY', KEYS[3], ARGV[3], lost) end
return lost`)

const resourceTimeout = 2 * time.Second

func Open(addr, prefix string) (*Resource, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		return nil, fmt.Errorf("resource %s: %w", addr, err)
	}
	return &Resource{c: c, prefix: prefix}, nil
}

func (r *Resource) Close() { r.c.Close() }

func (r *Resource) key(parts ...string) string { return r.prefix + strings.Join(parts, ":") }

func (r *Resource) k(idx uint64, kind string) string {
	return r.prefix + kind + ":" + strconv.FormatUint(idx, 10)
}

// token is the next fencing token.
func (r *Resource) Token(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	return r.c.Do(ctx, r.c.B().Incr().Key(r.key("fence")).Build()).AsInt64()
}

// read returns the counter; ok is false when a fenced read was refused.
func (r *Resource) Read(ctx context.Context, idx uint64, token int64) (v int64, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	if token == 0 {
		v, err = r.c.Do(ctx, r.c.B().Get().Key(r.k(idx, "res")).Build()).AsInt64()
		if rueidis.IsRedisNil(err) {
			return 0, true, nil
		}
		return v, err == nil, err
	}
	v, err = fencedReadScript.Exec(ctx, r.c, []string{r.k(idx, "res"), r.k(idx, "hi"), r.key("rej", "r")},
		[]string{strconv.FormatInt(token, 10)}).AsInt64()
	if err != nil {
		return 0, false, err
	}
	return v, v >= 0, nil
}

// write stores v, filed under second slot of the cell; applied is false
// when a fenced write was refused, lost is how many acknowledged writes it
// overwrote.
func (r *Resource) Write(ctx context.Context, idx uint64, v, token, slot int64) (applied bool, lost int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	val, sec := strconv.FormatInt(v, 10), strconv.FormatInt(slot, 10)
	if token == 0 {
		lost, err = writeScript.Exec(ctx, r.c, []string{r.k(idx, "res"), r.key("acks"), r.key("lost", "s")}, []string{val, sec}).AsInt64()
		return err == nil, lost, err
	}
	res, err := fencedWriteScript.Exec(ctx, r.c,
		[]string{r.k(idx, "res"), r.k(idx, "hi"), r.key("acks"), r.key("rej", "w"), r.key("lost", "s"), r.key("rej", "w", "s")},
		[]string{val, strconv.FormatInt(token, 10), sec}).AsIntSlice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("resource: fenced write answered %v, want {applied, lost}", res)
	}
	if err != nil {
		return false, 0, err
	}
	return res[0] == 1, res[1], nil
}

// Record files in the ledger a write of v that a lock service applied
// itself over prev (or refused: not applied), in second slot of the cell;
// lost is how many acknowledged writes it overwrote.
func (r *Resource) Record(ctx context.Context, idx uint64, v, prev, slot int64, applied bool) (lost int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	a := "0"
	if applied {
		a = "1"
	}
	return recordScript.Exec(ctx, r.c, []string{r.k(idx, "res"), r.key("acks"), r.key("lost", "s"), r.key("rej", "w"), r.key("rej", "w", "s")},
		[]string{strconv.FormatInt(v, 10), strconv.FormatInt(prev, 10), strconv.FormatInt(slot, 10), a}).AsInt64()
}

// RecordDoubt files a guarded write whose answer was lost (it may have
// landed): Judge then counts lost updates write by write.
func (r *Resource) RecordDoubt(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	return r.c.Do(ctx, r.c.B().Incr().Key(r.key("doubt")).Build()).Error()
}

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
	// The critical section, for the linearizability check: which worker of
	// the client, when it read (Begin) and its write returned (End), the
	// value read and what became of the write ("" outcome: no section, the
	// read failed or was refused).
	Worker     int
	Begin, End int64
	Read       int64
	Outcome    Outcome
}

// Op is the hold's critical section; false when it had none.
func (h Hold) Op() (Op, bool) {
	return Op{Key: h.Key, Client: h.Client, Worker: h.Worker, Begin: h.Begin, End: h.End, Read: h.Read, Outcome: h.Outcome}, h.Outcome != 0
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
		strconv.Itoa(h.Worker), strconv.FormatInt(h.Begin, 10), strconv.FormatInt(h.End, 10), strconv.FormatInt(h.Read, 10), outcome}, " ")
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

// Findings are what the checkers found on the resource after a cell.
type Findings struct {
	Holds    int64 `json:"holds"`
	Unjudged int64 `json:"holds_not_judged"`
	// Violations: exclusion broken, one definition for every lock: a hold
	// that began while another holder of its key was still using its lock
	// (from the return of its acquire to its release call), whatever the
	// lock promised. ViolationsInPromise judges each hold only within what
	// its lock promised (Redis: its validity window; Unjudged: holds with
	// none left), the second figure.
	Violations          int64 `json:"violations"`
	ViolationsInPromise int64 `json:"violations_in_promise"`
	MaxConcurrent       int64 `json:"max_concurrent_holders"`
	Acks                int64 `json:"acknowledged_writes"`
	FinalSum            int64 `json:"final_sum"`
	LostUpdates         int64 `json:"lost_updates"`
	RejectedWrites      int64 `json:"stale_writes_rejected"`
	RejectedReads       int64 `json:"stale_reads_rejected"`
	Tokens              int64 `json:"fencing_tokens"`
	// InDoubt are guarded writes (made in the lock service) whose answer
	// was lost: some may have landed unacknowledged, so the lost updates
	// are then the writes' own count (each answered write's prev − read),
	// not acks − final sum, which such a write would drive below zero.
	InDoubt int64 `json:"guarded_in_doubt,omitempty"`
	// When things happened, by second of the cell (from its t0): lost
	// updates and refused fenced writes as the writes saw them, and the
	// starts (Unix ns) of the holds that overlapped another.
	LostBySecond     map[int64]int64 `json:"-"`
	RejectedBySecond map[int64]int64 `json:"-"`
	ViolationStarts  []int64         `json:"-"`
	// History is every critical section, for the linearizability check.
	History []Op `json:"-"`
	// Acquired are the holds' acquires, each as its start and its return
	// (Unix ns), in order of start: when the lock could be had.
	Acquired []Acquire `json:"-"`
}

// Acquire is one logged hold's acquire: started at T1, returned at Done.
// ValidEnd is when the lock stopped being valid (Hold.ValidEnd).
type Acquire struct{ T1, Done, ValidEnd int64 }

// HeldAt counts the locks granted before t (Unix ns) and still valid at
// t: what a fault at t could take from their holders.
func (ck *Findings) HeldAt(t int64) int {
	n := 0
	for _, a := range ck.Acquired {
		if a.Done <= t && t < a.ValidEnd {
			n++
		}
	}
	return n
}

// FirstAcquireAfter is the acquire started at or after t (Unix ns) that
// won the lock first (the earliest to return); false when none did.
func (ck *Findings) FirstAcquireAfter(t int64) (Acquire, bool) {
	i := sort.Search(len(ck.Acquired), func(i int) bool { return ck.Acquired[i].T1 >= t })
	if i == len(ck.Acquired) {
		return Acquire{}, false
	}
	first := ck.Acquired[i]
	for _, a := range ck.Acquired[i+1:] {
		if a.T1 >= first.Done {
			break // started after it returned: cannot return before it
		}
		if a.Done < first.Done {
			first = a
		}
	}
	return first, true
}

// Unavailable is the longest span within [from, end] (Unix ns) in which no
// acquire returned holding a lock: from from to the first such return,
// between two, or from the last to end. toEnd: none returned in it, the
// span is from to end (at least that long). Measured on the acquires' own
// timestamps, so an outage reads the same wherever it falls in a second.
func (ck *Findings) Unavailable(from, end int64) (span int64, toEnd bool) {
	var dones []int64
	for _, a := range ck.Acquired {
		if a.Done >= from && a.Done <= end {
			dones = append(dones, a.Done)
		}
	}
	if len(dones) == 0 {
		return max(0, end-from), true
	}
	slices.Sort(dones)
	last := from
	for _, d := range dones {
		span, last = max(span, d-last), d
	}
	return max(span, end-last), false
}

// Judge reads the resource after a cell: the hold log for
// overlapping validity windows, and the counters against the acknowledged
// writes for lost updates.
func Judge(ctx context.Context, addr, prefix string, keys uint64) (Findings, error) {
	r, err := Open(addr, prefix)
	if err != nil {
		return Findings{}, err
	}
	defer r.Close()
	var ck Findings
	if err := r.readCounters(ctx, &ck); err != nil {
		return ck, err
	}
	if ck.FinalSum, err = r.finalSum(ctx, keys); err != nil {
		return ck, err
	}
	// Each acknowledged write added one to what its writer read; a write
	// that overlapped another's read-modify-write added nothing.
	ck.LostUpdates = ck.Acks - ck.FinalSum
	if ck.LostBySecond, err = bySecond(ctx, r, r.key("lost", "s")); err != nil {
		return ck, err
	}
	if ck.InDoubt > 0 {
		ck.LostUpdates = 0
		for _, n := range ck.LostBySecond {
			ck.LostUpdates += n
		}
	}
	if ck.RejectedBySecond, err = bySecond(ctx, r, r.key("rej", "w", "s")); err != nil {
		return ck, err
	}
	holds, err := r.readHolds(ctx)
	if err != nil {
		return ck, err
	}
	ck.Holds = int64(len(holds))
	ck.Violations, ck.MaxConcurrent, _ = overlaps(holds, Hold.Use, func(start int64) { ck.ViolationStarts = append(ck.ViolationStarts, start) })
	ck.ViolationsInPromise, _, ck.Unjudged = overlaps(holds, Hold.Window, nil)
	for _, h := range holds {
		if op, ok := h.Op(); ok {
			ck.History = append(ck.History, op)
		}
		ck.Acquired = append(ck.Acquired, Acquire{T1: h.T1, Done: h.T1 + h.Elapsed, ValidEnd: h.ValidEnd()})
	}
	sort.Slice(ck.Acquired, func(i, j int) bool { return ck.Acquired[i].T1 < ck.Acquired[j].T1 })
	return ck, nil
}

// readCounters reads the acknowledged writes, the refused writes and reads
// and the fencing tokens handed out (0 when a counter was never set).
func (r *Resource) readCounters(ctx context.Context, ck *Findings) error {
	for _, f := range []struct {
		dst *int64
		key string
	}{{&ck.Acks, r.key("acks")}, {&ck.RejectedWrites, r.key("rej", "w")}, {&ck.RejectedReads, r.key("rej", "r")}, {&ck.Tokens, r.key("fence")}, {&ck.InDoubt, r.key("doubt")}} {
		v, err := r.c.Do(ctx, r.c.B().Get().Key(f.key).Build()).AsInt64()
		if rueidis.IsRedisNil(err) {
			v, err = 0, nil
		}
		*f.dst = v
		if err != nil {
			return fmt.Errorf("resource: GET %s: %w", f.key, err)
		}
	}
	return nil
}

// finalSum adds up the protected counters of the keys, in MGETs of 5000.
func (r *Resource) finalSum(ctx context.Context, keys uint64) (int64, error) {
	const chunk = 5000
	var sum int64
	for lo := uint64(0); lo < keys; lo += chunk {
		hi := min(lo+chunk, keys)
		ks := make([]string, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ks = append(ks, r.k(i, "res"))
		}
		vals, err := r.c.Do(ctx, r.c.B().Mget().Key(ks...).Build()).ToArray()
		if err != nil {
			return sum, fmt.Errorf("resource: MGET: %w", err)
		}
		for _, v := range vals {
			if n, err := v.AsInt64(); err == nil {
				sum += n
			}
		}
	}
	return sum, nil
}

// readHolds reads the whole hold log, in LRANGEs of 50,000 entries.
func (r *Resource) readHolds(ctx context.Context) ([]Hold, error) {
	var holds []Hold
	n, err := r.c.Do(ctx, r.c.B().Llen().Key(r.key("holds")).Build()).AsInt64()
	if err != nil {
		return nil, fmt.Errorf("resource: LLEN holds: %w", err)
	}
	for lo := int64(0); lo < n; lo += 50_000 {
		items, err := r.c.Do(ctx, r.c.B().Lrange().Key(r.key("holds")).Start(lo).Stop(lo+50_000-1).Build()).AsStrSlice()
		if err != nil {
			return nil, fmt.Errorf("resource: LRANGE holds: %w", err)
		}
		for _, it := range items {
			h, err := parseHold(it)
			if err != nil {
				return nil, err
			}
			holds = append(holds, h)
		}
	}
	return holds, nil
}

const holdFormat = `"key t1 elapsed used ttl drift_factor client worker begin end read outcome"`

// bySecond reads a second → count hash the write scripts keep.
func bySecond(ctx context.Context, r *Resource, key string) (map[int64]int64, error) {
	kv, err := r.c.Do(ctx, r.c.B().Hgetall().Key(key).Build()).AsIntMap()
	if err != nil {
		return nil, fmt.Errorf("resource: HGETALL %s: %w", key, err)
	}
	out := make(map[int64]int64, len(kv))
	for k, v := range kv {
		s, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("resource: %s: second %q is not a number", key, k)
		}
		out[s] += v
	}
	return out, nil
}

func parseHold(s string) (Hold, error) {
	f := strings.Fields(s)
	if len(f) != 12 {
		return Hold{}, fmt.Errorf("resource: hold log entry %q is not %s", s, holdFormat)
	}
	var h Hold
	var errs [12]error
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

// Overlaps counts holds that began while another hold of the same key was
// still inside its validity window (as the live probe counts them: within
// what the lock promised), the most holders of one key at once, and the
// holds that could not be judged (no window). A hold that ends exactly
// when the next begins does not overlap it.
func Overlaps(holds []Hold) (violations, maxConcurrent, unjudged int64) {
	return overlaps(holds, Hold.Window, nil)
}

// UseOverlaps counts holds that began while another holder of the same key
// was still using its lock, validity or not: exclusion broken.
func UseOverlaps(holds []Hold) (violations, maxConcurrent int64) {
	v, m, _ := overlaps(holds, Hold.Use, nil)
	return v, m
}

// overlaps counts the holds whose span (as span gives it) began inside
// another's of the same key, and hands the start (Unix ns) of each to seen.
func overlaps(holds []Hold, span func(Hold) (start, end int64, ok bool), seen func(start int64)) (violations, maxConcurrent, unjudged int64) {
	type window struct{ start, end int64 }
	byKey := map[uint64][]window{}
	for _, h := range holds {
		start, end, ok := span(h)
		if !ok {
			unjudged++
			continue
		}
		byKey[h.Key] = append(byKey[h.Key], window{start, end})
	}
	for _, ws := range byKey {
		sort.Slice(ws, func(i, j int) bool { return ws[i].start < ws[j].start })
		var ends []int64 // ends of the windows still open, a small set
		for _, w := range ws {
			live := ends[:0]
			for _, e := range ends {
				if e > w.start {
					live = append(live, e)
				}
			}
			ends = live
			if len(ends) > 0 {
				violations++
				if seen != nil {
					seen(w.start)
				}
			}
			ends = append(ends, w.end)
			maxConcurrent = max(maxConcurrent, int64(len(ends)))
		}
	}
	return violations, maxConcurrent, unjudged
}
