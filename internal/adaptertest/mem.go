package adaptertest

import (
	"context"
	"os"
	"strconv"
	"sync"
	"time"

	"lockbench/adapter"
	"lockbench/lock"
)

// MemLocker is a lock in memory: what the adapter protocol costs,
// measured with no servers behind it.
type MemLocker struct {
	mu   sync.Mutex
	held map[string]string // key → token
	n    int64
	TTL  time.Duration
}

func (m *MemLocker) Acquire(_ context.Context, key string) (*lock.Lock, lock.Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, taken := m.held[key]; taken {
		return nil, lock.Result{Attempts: 1, Taken: true}
	}
	if m.held == nil {
		m.held = map[string]string{}
	}
	m.n++
	tok := strconv.FormatInt(m.n, 36)
	m.held[key] = tok
	now := time.Now()
	return &lock.Lock{Key: key, Token: tok, Start: now, ValidUntil: now.Add(m.TTL)}, lock.Result{Acquired: true, Attempts: 1, Successes: 1}
}

func (m *MemLocker) Release(_ context.Context, l *lock.Lock) lock.OpResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[l.Key] != l.Token {
		return lock.OpResult{}
	}
	delete(m.held, l.Key)
	return lock.OpResult{OK: true, Count: 1}
}

// OpenMem serves a MemLocker of hello's TTL.
func OpenMem(_ context.Context, hello adapter.Msg) (lock.Locker, adapter.HelloOK, error) {
	return &MemLocker{TTL: time.Duration(hello.TTLms) * time.Millisecond}, adapter.HelloOK{
		Library:  adapter.Library{Name: "memory", Version: "0", Language: "go"},
		Validity: adapter.ValidityMethod{Method: "ttl"},
	}, nil
}

// ServeMem is the in-memory lock as an adapter process (mode "mem").
func ServeMem() {
	if err := adapter.Serve(os.Stdin, os.Stdout, OpenMem); err != nil {
		os.Stderr.WriteString("memory adapter: " + err.Error() + "\n")
		os.Exit(1)
	}
}
