package adapter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"lockbench/lock"
)

// Open makes the Go lock library a served adapter drives from hello: its
// Locker (an Extender too when it extends) and what hello_ok says of it.
type Open func(ctx context.Context, hello Msg) (lock.Locker, HelloOK, error)

// Serve is the adapter side of the protocol for a Go Locker: hello, then
// every request on a handler goroutine of its own while it runs, replies
// as they come. It returns at EOF on in, once its held locks are released.
func Serve(in io.Reader, out io.Writer, open Open) error {
	s := &server{w: newLineWriter(out, nil), idle: make(chan func()), inflight: map[int64]context.CancelFunc{}, held: map[string]*lock.Lock{}}
	defer s.w.close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	if !sc.Scan() {
		return errors.New("no hello on stdin")
	}
	if err := s.hello(sc.Bytes(), open); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer close(s.idle)
	for sc.Scan() {
		var m Msg
		if err := decodeMsg(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("malformed request %s", firstBytes(sc.Bytes()))
		}
		s.serve(&wg, m)
	}
	s.cancelAll()
	wg.Wait()
	s.releaseAll()
	return sc.Err()
}

// server is one served session.
type server struct {
	w        *lineWriter
	idle     chan func() // idle handlers take requests here (unbuffered)
	lk       lock.Locker
	caps     Capabilities
	mu       sync.Mutex
	inflight map[int64]context.CancelFunc
	held     map[string]*lock.Lock // by token
}

func (s *server) hello(line []byte, open Open) error {
	var m Msg
	if err := json.Unmarshal(line, &m); err != nil || m.Type != TypeHello {
		return fmt.Errorf("first line is not hello: %s", firstBytes(line))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lk, ok, err := open(ctx, m)
	if err != nil {
		s.w.send(&Msg{Type: TypeError, InReplyTo: m.ID, Code: "hello_failed", Reason: err.Error()})
		return err
	}
	s.lk, s.caps = lk, ok.Capabilities
	s.w.send(&Msg{Type: TypeHelloOK, InReplyTo: m.ID, Protocol: ProtocolVersion, Library: &ok.Library,
		Capability: &ok.Capabilities, Validity: &ok.Validity})
	return nil
}

// serve answers one request (cancel: none; it ends one in flight).
func (s *server) serve(wg *sync.WaitGroup, m Msg) {
	var do func(context.Context, Msg) Msg
	switch m.Type {
	case TypeAcquire:
		do = s.acquire
	case TypeRelease:
		do = s.release
	case TypeExtend:
		do = s.extend
	case TypeCancel:
		s.mu.Lock()
		if cancel := s.inflight[m.Cancels]; cancel != nil {
			cancel()
		}
		s.mu.Unlock()
		return
	default:
		s.w.send(&Msg{Type: TypeError, InReplyTo: m.ID, Code: "not_supported", Reason: fmt.Sprintf("unknown request type %q", m.Type)})
		return
	}
	ctx, cancel := context.Background(), context.CancelFunc(nil)
	if m.Type != TypeRelease { // a release runs to its end, cancel or not
		ctx, cancel = context.WithCancel(ctx)
		s.mu.Lock()
		s.inflight[m.ID] = cancel
		s.mu.Unlock()
	}
	wg.Add(1)
	s.run(func() {
		defer wg.Done()
		r := do(ctx, m)
		if cancel != nil {
			s.mu.Lock()
			delete(s.inflight, m.ID)
			s.mu.Unlock()
			cancel()
		}
		r.InReplyTo = m.ID
		s.w.send(&r)
	})
}

// run has f run by an idle handler, or by a new one when all are busy.
// Handlers outlive their request: a goroutine per request grew its
// stack through the engine's calls each time (9% of the reference
// adapter's CPU in a cell's profile).
func (s *server) run(f func()) {
	select {
	case s.idle <- f:
	default:
		go s.handler(f)
	}
}

// handler runs f, then requests as they come, until Serve returns.
func (s *server) handler(f func()) {
	for ok := true; ok; f, ok = <-s.idle {
		f()
	}
}

func (s *server) acquire(ctx context.Context, m Msg) Msg {
	t := time.Now()
	l, res := s.lk.Acquire(ctx, m.Key)
	elapsed := ms(time.Since(t))
	switch {
	case l != nil && res.Acquired:
		s.keep(l)
		return Msg{Type: TypeGranted, Token: l.Token, ValidityMs: ms(validUntil(l).Sub(time.Now())), Fence: l.Fence,
			Attempts: res.Attempts, ElapsedMs: elapsed}
	case res.Err != nil || ctx.Err() != nil: // a cancel that came mid-attempt, too
		return Msg{Type: TypeRefused, Reason: "cancelled", Attempts: res.Attempts, ElapsedMs: elapsed}
	case res.Taken || slices.Contains(res.PerMaster, lock.Taken) || res.Successes >= lock.Quorum(len(res.PerMaster)):
		return Msg{Type: TypeRefused, Reason: "held by another", Attempts: res.Attempts, ElapsedMs: elapsed}
	}
	// Not enough servers answered: the library released what it set.
	return Msg{Type: TypeFailed, Definite: boolp(true), Reason: "no quorum of servers answered", Attempts: res.Attempts, ElapsedMs: elapsed}
}

// validUntil is a held lock's end as its library last knew it.
func validUntil(l *lock.Lock) time.Time {
	if l.Until != nil {
		return l.Until()
	}
	return l.ValidUntil
}

// keep files a granted lock, and sends lost when its library ends it.
func (s *server) keep(l *lock.Lock) {
	s.mu.Lock()
	s.held[l.Token] = l
	s.mu.Unlock()
	if l.Lost == nil {
		return
	}
	go func() {
		<-l.Lost
		s.mu.Lock()
		_, still := s.held[l.Token]
		s.mu.Unlock()
		if still {
			s.w.send(&Msg{Type: TypeLost, Key: l.Key, Token: l.Token, Reason: "renewal failed"})
		}
	}()
}

func (s *server) take(token string) *lock.Lock {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.held[token]
	delete(s.held, token)
	return l
}

func (s *server) release(ctx context.Context, m Msg) Msg {
	l := s.take(m.Token)
	if l == nil {
		return Msg{Type: TypeRefused, Reason: "not held"}
	}
	t := time.Now()
	if r := s.lk.Release(ctx, l); !r.OK {
		return Msg{Type: TypeRefused, Reason: "not held on any server", ElapsedMs: ms(time.Since(t))}
	}
	return Msg{Type: TypeReleased, ElapsedMs: ms(time.Since(t))}
}

func (s *server) extend(ctx context.Context, m Msg) Msg {
	ext, ok := s.lk.(lock.Extender)
	s.mu.Lock()
	l := s.held[m.Token]
	s.mu.Unlock()
	switch {
	case !ok || !s.caps.Extend:
		return Msg{Type: TypeError, Code: "not_supported", Reason: "this library does not extend"}
	case l == nil:
		return Msg{Type: TypeRefused, Reason: "not held"}
	}
	t := time.Now()
	r := ext.Extend(ctx, l, time.Duration(m.TTLms)*time.Millisecond)
	if !r.OK {
		return Msg{Type: TypeRefused, Reason: "not extended within its validity", ElapsedMs: ms(time.Since(t))}
	}
	return Msg{Type: TypeExtended, ValidityMs: ms(time.Until(l.ValidUntil)), ElapsedMs: ms(time.Since(t))}
}

func (s *server) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cancel := range s.inflight {
		cancel()
	}
}

// releaseAll releases what lockbench left held as it went away.
func (s *server) releaseAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.mu.Lock()
	held := s.held
	s.held = map[string]*lock.Lock{}
	s.mu.Unlock()
	for _, l := range held {
		s.lk.Release(ctx, l)
	}
}

// PolledStdin is stdin read through the runtime's poller: a read that
// would wait parks its goroutine instead of holding a thread in read(2),
// which the runtime's monitor then polls every 20 µs to take its P back
// (14% of the reference adapter's CPU in a cell's profile). Stdin as it
// is when it cannot be made so.
func PolledStdin() io.Reader {
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	return os.NewFile(0, "stdin")
}
