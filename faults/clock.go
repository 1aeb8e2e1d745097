package faults

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// libfaketime and the allocator shim are searched for in these places (the
// Debian faketime and libc6 packages; multiarch directories vary).
var (
	faketimeGlobs = []string{
		"/usr/lib/*/faketime/libfaketime.so.1",
		"/usr/lib/faketime/libfaketime.so.1",
		"/usr/local/lib/faketime/libfaketime.so.1",
	}
	mallocShimGlobs = []string{
		"/lib/*/libc_malloc_debug.so.0",
		"/usr/lib/*/libc_malloc_debug.so.0",
		"/lib64/libc_malloc_debug.so.0",
	}
)

// ErrNoFaketime means libfaketime is not installed.
var ErrNoFaketime = errors.New("libfaketime not found; install it (apt-get install faketime)")

func firstGlob(globs []string) string {
	for _, g := range globs {
		if m, _ := filepath.Glob(g); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

// FaketimeAvailable reports whether a master can be run under a fake clock.
func FaketimeAvailable() error {
	if firstGlob(faketimeGlobs) == "" {
		return ErrNoFaketime
	}
	return nil
}

// Clock is the fake wall clock of one process run under libfaketime: an
// offset from real time kept in a file that libfaketime reads on every
// clock call, so a Jump takes effect at once.
type Clock struct {
	file string

	mu     sync.Mutex
	offset time.Duration
}

// NewClock writes a zero offset into dir and returns the clock.
func NewClock(dir string) (*Clock, error) {
	f, err := os.CreateTemp(dir, "faketime-*.rc")
	if err != nil {
		return nil, fmt.Errorf("faults: clock file: %w", err)
	}
	f.Close()
	c := &Clock{file: f.Name()}
	if err := c.write(0); err != nil {
		return nil, err
	}
	return c, nil
}

// Env is the environment that runs a process on this clock. It preloads
// libfaketime directly rather than through the faketime command, which
// forks: the pid a caller signals must be the server's own.
//
// glibc's malloc (libc_malloc_debug) is preloaded first: redis-server's
// jemalloc reads the clock while initialising, and libfaketime's own
// initialisation then allocates, which deadlocks inside jemalloc.
// Only the wall clock is faked (FAKETIME_DONT_FAKE_MONOTONIC): that is the
// clock Redis expires keys by, and its event loop keeps a sane timer.
func (c *Clock) Env() ([]string, error) {
	lib := firstGlob(faketimeGlobs)
	if lib == "" {
		return nil, ErrNoFaketime
	}
	preload := lib
	if shim := firstGlob(mallocShimGlobs); shim != "" {
		preload = shim + " " + lib
	}
	return []string{
		"LD_PRELOAD=" + preload,
		"FAKETIME_TIMESTAMP_FILE=" + c.file,
		"FAKETIME_NO_CACHE=1",
		"FAKETIME_DONT_FAKE_MONOTONIC=1",
	}, nil
}

// File is the timestamp file (inside the dir given to NewClock).
func (c *Clock) File() string { return c.file }

// Offset is how far the fake clock is ahead of real time.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// Jump moves the clock by d (forward when positive) from where it is.
func (c *Clock) Jump(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write(c.offset + d); err != nil {
		return err
	}
	c.offset += d
	return nil
}

// write replaces the file atomically: libfaketime re-reads it on every
// call and must never see it half written.
func (c *Clock) write(off time.Duration) error {
	s := strconv.FormatFloat(off.Seconds(), 'f', 6, 64)
	if off >= 0 {
		s = "+" + s
	}
	tmp := c.file + ".tmp"
	if err := os.WriteFile(tmp, []byte(s+"\n"), 0o644); err != nil {
		return fmt.Errorf("faults: clock file: %w", err)
	}
	if err := os.Rename(tmp, c.file); err != nil {
		return fmt.Errorf("faults: clock file: %w", err)
	}
	return nil
}
