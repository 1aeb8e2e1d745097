package adapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"time"

	"lockbench/lock"
)

// CheckOptions are a conformance run's: the adapter, the servers it is
// given (lockbench started them), and how to end a lock behind the
// adapter's back (the lost-notice check).
type CheckOptions struct {
	Argv     []string
	Servers  []string
	Settings map[string]any
	// TTL is the locks' (0: 1s); ReplyBound how long past a request's
	// time an answer may take (0: 3s).
	TTL        time.Duration
	ReplyBound time.Duration
	// DropKey deletes key on every server (nil: the lost-notice check
	// cannot run).
	DropKey func(ctx context.Context, key string) error
	Stderr  io.Writer // the adapter's logs (nil: dropped)
}

// Verdicts of a check.
const (
	Pass = "PASS"
	Fail = "FAIL"
	NA   = "N/A" // the adapter does not claim what it checks
)

// CheckResult is one check's line.
type CheckResult struct {
	Name, Verdict, Detail string
}

func (r CheckResult) String() string { return fmt.Sprintf("%-4s %s: %s", r.Verdict, r.Name, r.Detail) }

// check is one conformance check: its verdict and what was seen.
type check struct {
	name string
	run  func(k *checker, ctx context.Context) (string, string)
}

var checks = []check{
	{"hello & capabilities", (*checker).hello},
	{"acquire & release", (*checker).acquireRelease},
	{"two holders on one key", (*checker).exclusion},
	{"release of a lock not held", (*checker).releaseNotHeld},
	{"extend", (*checker).extend},
	{"lost notice", (*checker).lostNotice},
	{"unknown request", (*checker).unknown},
	{"many in flight", (*checker).manyInFlight},
	{"late grant", (*checker).lateGrant},
}

// Check runs every conformance check on a fresh adapter session each,
// writing each line to out as it ends; ok only when none failed.
func Check(ctx context.Context, opt CheckOptions, out io.Writer) (results []CheckResult, ok bool) {
	if opt.TTL <= 0 {
		opt.TTL = time.Second
	}
	if opt.ReplyBound <= 0 {
		opt.ReplyBound = 3 * time.Second
	}
	ok = true
	for _, c := range checks {
		k := &checker{opt: opt, prefix: "lockbench-check:" + randomHex() + ":"}
		cctx, cancel := context.WithTimeout(ctx, 4*opt.TTL+4*opt.ReplyBound)
		v, detail := c.run(k, cctx)
		cancel()
		k.close()
		if err := k.broken(); err != nil { // the session broke: that is what was seen
			v, detail = Fail, err.Error()
		}
		r := CheckResult{Name: c.name, Verdict: v, Detail: detail}
		results = append(results, r)
		ok = ok && v != Fail
		fmt.Fprintln(out, r)
	}
	return results, ok
}

func randomHex() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// checker is one check's sessions.
type checker struct {
	opt      CheckOptions
	prefix   string
	sessions []*Client
}

// start is a new session of the adapter whose acquires try for wait.
func (k *checker) start(ctx context.Context, wait time.Duration, extra map[string]any) (*Client, error) {
	settings := map[string]any{}
	for n, v := range k.opt.Settings {
		settings[n] = v
	}
	for n, v := range extra {
		settings[n] = v
	}
	c, err := Start(ctx, Options{Argv: k.opt.Argv, Stderr: k.opt.Stderr, ReplyBound: k.opt.ReplyBound, HelloTimeout: k.opt.ReplyBound,
		Hello: Hello{Servers: k.opt.Servers, TTL: k.opt.TTL, Wait: wait, MaxFlight: 64, Settings: settings}})
	if err == nil {
		k.sessions = append(k.sessions, c)
	}
	return c, err
}

func (k *checker) close() {
	for _, c := range k.sessions {
		c.Close()
	}
}

// broken is the first session's protocol error, if any broke (Close's
// own is not one).
func (k *checker) broken() error {
	for _, c := range k.sessions {
		if err := c.Err(); err != nil && err != errClosed {
			return err
		}
	}
	return nil
}

func (k *checker) hello(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, nil)
	if err != nil {
		return Fail, err.Error()
	}
	h := c.Hello()
	return Pass, fmt.Sprintf("%s %s (%s); extend %v, auto_extend %v, fence %v, lost_notice %v; validity %s",
		h.Library.Name, h.Library.Version, orNone(h.Library.Language), h.Capabilities.Extend, h.Capabilities.AutoExtend,
		h.Capabilities.Fence, h.Capabilities.LostNotice, describeValidity(h.Validity))
}

func orNone(s string) string {
	if s == "" {
		return "language not given"
	}
	return s
}

func describeValidity(v ValidityMethod) string {
	if v.Method == "drift" {
		return fmt.Sprintf("drift (factor %g, %gms)", v.DriftFactor, v.DriftMs)
	}
	return v.Method
}

func (k *checker) acquireRelease(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, nil)
	if err != nil {
		return Fail, err.Error()
	}
	l, res := c.Acquire(ctx, k.prefix+"a")
	switch {
	case res.Err != nil:
		return Fail, "acquire of a free key: " + res.Err.Error()
	case l == nil:
		return Fail, fmt.Sprintf("acquire of a free key not granted (refused %v)", res.Taken)
	case res.Validity <= 0 || res.Validity > k.opt.TTL:
		return Fail, fmt.Sprintf("granted with %v left of a %v TTL", res.Validity, k.opt.TTL)
	}
	r := c.Release(ctx, l)
	if !r.OK {
		return Fail, "release of the held lock not released"
	}
	l2, _ := c.Acquire(ctx, k.prefix+"a")
	if l2 == nil {
		return Fail, "the key was not free after its release"
	}
	c.Release(ctx, l2)
	return Pass, fmt.Sprintf("granted in %v with %v left (token %q), released in %v, granted again after", res.Elapsed.Round(time.Microsecond),
		res.Validity.Round(time.Millisecond), l.Token, r.Elapsed.Round(time.Microsecond))
}

// exclusion: two sessions, four acquires each at once on one free key:
// exactly one is granted while it holds.
func (k *checker) exclusion(ctx context.Context) (string, string) {
	var cs []*Client
	for range 2 {
		c, err := k.start(ctx, 0, nil)
		if err != nil {
			return Fail, err.Error()
		}
		cs = append(cs, c)
	}
	key := k.prefix + "x"
	var mu sync.Mutex
	var won []*lock.Lock
	var winners []*Client
	var wg sync.WaitGroup
	for i := range 8 {
		c := cs[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l, _ := c.Acquire(ctx, key); l != nil {
				mu.Lock()
				won, winners = append(won, l), append(winners, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, l := range won {
		winners[i].Release(ctx, l)
	}
	if len(won) != 1 {
		return Fail, fmt.Sprintf("%d of 8 acquires at once on one key (two sessions) were granted; want exactly 1", len(won))
	}
	return Pass, "1 of 8 acquires at once on one key (two sessions) granted, 7 refused"
}

func (k *checker) releaseNotHeld(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, nil)
	if err != nil {
		return Fail, err.Error()
	}
	m, _, err := c.Request(ctx, Msg{Type: TypeRelease, Key: k.prefix + "r", Token: "never-granted"})
	switch {
	case err != nil:
		return Fail, "release of a token never granted: " + err.Error()
	case m.Type == TypeReleased:
		return Fail, "release of a token never granted was answered released"
	}
	l, _ := c.Acquire(ctx, k.prefix+"r")
	if l == nil {
		return Fail, "acquire of a free key not granted"
	}
	c.Release(ctx, l)
	if r := c.Release(ctx, l); r.OK {
		return Fail, "a second release of the same lock was answered released"
	}
	return Pass, fmt.Sprintf("a token never granted: %s (%s); a second release: not released", m.Type, orNone(m.Reason))
}

func (k *checker) extend(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, nil)
	if err != nil {
		return Fail, err.Error()
	}
	if !c.Hello().Capabilities.Extend {
		return NA, "not claimed (capabilities.extend false)"
	}
	l, _ := c.Acquire(ctx, k.prefix+"e")
	if l == nil {
		return Fail, "acquire of a free key not granted"
	}
	defer c.Release(ctx, l)
	time.Sleep(k.opt.TTL / 4)
	r := c.Extend(ctx, l, k.opt.TTL)
	if !r.OK || r.Validity <= 3*k.opt.TTL/4 {
		return Fail, fmt.Sprintf("extend of a held lock by %v a quarter in: ok %v, %v left", k.opt.TTL, r.OK, r.Validity)
	}
	bogus := *l
	bogus.Token = "never-granted"
	if r2 := c.Extend(ctx, &bogus, k.opt.TTL); r2.OK {
		return Fail, "extend of a token never granted was answered extended"
	}
	return Pass, fmt.Sprintf("extended a quarter in: %v left; a token never granted: not extended", r.Validity.Round(time.Millisecond))
}

// lostNotice: with renewal asked for (settings watchdog: true), the
// lock's key deleted on the servers: the adapter must say lost within
// two TTLs.
func (k *checker) lostNotice(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, map[string]any{"watchdog": true})
	if err != nil {
		return Fail, err.Error()
	}
	if !c.Hello().Capabilities.LostNotice {
		return NA, "not claimed (capabilities.lost_notice false with settings.watchdog true)"
	}
	if k.opt.DropKey == nil {
		return NA, "this run cannot end a lock behind the adapter's back"
	}
	key := k.prefix + "l"
	l, _ := c.Acquire(ctx, key)
	if l == nil || l.Lost == nil {
		return Fail, "acquire of a free key not granted"
	}
	if err := k.opt.DropKey(ctx, key); err != nil {
		return Fail, "deleting the key on the servers: " + err.Error()
	}
	t := time.Now()
	select {
	case <-l.Lost:
		c.Release(ctx, l)
		return Pass, fmt.Sprintf("lost came %v after the key was deleted on the servers", time.Since(t).Round(time.Millisecond))
	case <-time.After(2 * k.opt.TTL):
		c.Release(ctx, l)
		return Fail, fmt.Sprintf("no lost within %v of the key's deletion on the servers", 2*k.opt.TTL)
	}
}

func (k *checker) unknown(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, nil)
	if err != nil {
		return Fail, err.Error()
	}
	m, _, err := c.Request(ctx, Msg{Type: "lockbench_unknown_request"})
	switch {
	case err != nil:
		return Fail, "unknown request: " + err.Error()
	case m.Type != TypeError || m.Code != "not_supported":
		return Fail, fmt.Sprintf("unknown request answered %s (code %q); want error, code not_supported", m.Type, m.Code)
	}
	l, _ := c.Acquire(ctx, k.prefix+"u")
	if l == nil {
		return Fail, "acquire after it not granted"
	}
	c.Release(ctx, l)
	return Pass, "answered error not_supported; the session went on"
}

// manyInFlight: 32 acquires at once on 32 keys, all granted, each reply
// matched to its request.
func (k *checker) manyInFlight(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, nil)
	if err != nil {
		return Fail, err.Error()
	}
	const n = 32
	locks := make([]*lock.Lock, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			locks[i], _ = c.Acquire(ctx, fmt.Sprintf("%sm%d", k.prefix, i))
		}()
	}
	wg.Wait()
	granted := 0
	for i, l := range locks {
		if l != nil && l.Key == fmt.Sprintf("%sm%d", k.prefix, i) {
			granted++
			c.Release(ctx, l)
		}
	}
	if granted != n {
		return Fail, fmt.Sprintf("%d of %d acquires in flight at once on free keys granted", granted, n)
	}
	return Pass, fmt.Sprintf("%d acquires in flight at once on %d keys: all granted, each reply to its own request", n, n)
}

// lateGrant: acquires lockbench gives up on about when their grant
// would come (from a fifth to 1.75 of a grant's quickest round trip,
// measured first), a cancel following each: every grant that comes after is
// released by lockbench, so the keys are free again, and the session goes
// on.
func (k *checker) lateGrant(ctx context.Context) (string, string) {
	c, err := k.start(ctx, 0, nil)
	if err != nil {
		return Fail, err.Error()
	}
	rtt := time.Hour
	for range 5 {
		l, res := c.Acquire(ctx, k.prefix+"rtt")
		if l == nil {
			return Fail, "acquire of a free key not granted"
		}
		c.Release(ctx, l)
		rtt = min(rtt, res.Elapsed)
	}
	const n = 32
	for i := range n {
		gctx, cancel := context.WithTimeout(ctx, rtt*time.Duration(4+i)/20)
		if l, _ := c.Acquire(gctx, fmt.Sprintf("%sg%d", k.prefix, i)); l != nil {
			c.Release(ctx, l) // answered before the give-up
		}
		cancel()
	}
	deadline := time.Now().Add(k.opt.ReplyBound)
	for i := 0; i < n; i++ {
		l, _ := c.Acquire(ctx, fmt.Sprintf("%sg%d", k.prefix, i))
		if l != nil {
			c.Release(ctx, l)
			continue
		}
		if c.Err() != nil || time.Now().After(deadline) {
			return Fail, fmt.Sprintf("key %d of %d not free %v after its acquire was given up (%d late grants released)", i, n, k.opt.ReplyBound, c.LateGrants())
		}
		time.Sleep(10 * time.Millisecond)
		i--
	}
	if c.LateGrants() == 0 {
		return NA, fmt.Sprintf("judged nothing: of %d acquires given up about a grant's round trip (quickest %v) none was granted late", n, rtt.Round(time.Microsecond))
	}
	return Pass, fmt.Sprintf("%d acquires given up about a grant's round trip (quickest %v): %d granted late, released by lockbench; every key free after", n, rtt.Round(time.Microsecond), c.LateGrants())
}
