package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSegment reads "i/n" (1 ≤ i ≤ n); "" is the whole run, 1/1.
func ParseSegment(s string) (i, n int, err error) {
	if s == "" {
		return 1, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n || n > 10_000 {
		return 0, 0, fmt.Errorf("segment: %q is not accepted; use i/n with 1 <= i <= n, e.g. 1/2", s)
	}
	return i, n, nil
}

// share is part i (1-based) of total split into n as evenly as possible,
// and where it starts.
func share(total uint64, i, n int) (count, offset uint64) {
	base, rem := total/uint64(n), total%uint64(n)
	idx := uint64(i - 1)
	count = base
	if idx < rem {
		count++
	}
	offset = idx*base + min(idx, rem)
	return count, offset
}

// ForSegment is this segment's part of the load: its workers, its rate and
// its slice of the keyspace (all keys for a single hot key). The union of
// all segments is the whole run's load.
func (s Settings) ForSegment() (Settings, uint64, error) {
	i, n, err := ParseSegment(s.Segment)
	if err != nil || n == 1 {
		return s, 0, err
	}
	w, _ := share(uint64(s.Workers), i, n)
	if w == 0 {
		return s, 0, fmt.Errorf("segment: %d workers cannot be split into %d segments; use at least %d workers", s.Workers, n, n)
	}
	out := s
	out.Workers = int(w)
	out.Rate = s.Rate / float64(n)
	if s.Distribution == "single" || s.Keys == 1 { // a single hot key: every segment contends for it
		return out, 0, nil
	}
	k, off := share(s.Keys, i, n)
	if k == 0 {
		return s, 0, fmt.Errorf("segment: %d keys cannot be split into %d segments; use at least %d keys", s.Keys, n, n)
	}
	out.Keys = k
	return out, off, nil
}

// StartTime parses StartAt; zero when unset.
func (s Settings) StartTime() (time.Time, error) {
	if s.StartAt == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s.StartAt)
	if err != nil {
		return time.Time{}, fmt.Errorf("start-at: %q is not an RFC 3339 time such as 2026-11-30T10:00:00Z", s.StartAt)
	}
	return t, nil
}
