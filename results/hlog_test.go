package results

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A cell's repeats' logs are laid end to end in one log, readable by all;
// a missing repeat's log is skipped, and without any nothing is written.
func TestConcatIntervalLogs(t *testing.T) {
	dir := t.TempDir()
	write := func(k int, start int64, values ...int64) string {
		h := NewHistogram()
		h.SetStartTimeMs(start)
		h.SetEndTimeMs(start + 1000)
		for _, v := range values {
			_ = h.RecordValue(v)
		}
		path := RepeatLogPath(dir, "000-a", k, MetricAcquire)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(path, func(w io.Writer) error { return WriteIntervalLog(w, MetricAcquire, []*hdrhistogram.Histogram{h}) }); err != nil {
			t.Fatal(err)
		}
		return path
	}
	parts := []string{write(1, 1000, 10, 20), RepeatLogPath(dir, "000-a", 2, MetricAcquire), write(3, 5000, 30)}
	out := filepath.Join(dir, "cells", "000-a.acquire.hlog")
	if err := ConcatIntervalLogs(out, MetricAcquire, parts); err != nil {
		t.Fatal(err)
	}
	hs, ok, err := ReadLogFile(out)
	if err != nil || !ok || len(hs) != 2 || hs[0].TotalCount() != 2 || hs[1].StartTimeMs() != 5000 {
		t.Fatalf("concatenated log: %d intervals, ok %v, err %v", len(hs), ok, err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("concatenated log mode %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	none := filepath.Join(dir, "none.hlog")
	if err := ConcatIntervalLogs(none, MetricAcquire, parts[1:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no inputs: %v, want no file", err)
	}
	bad := filepath.Join(dir, "bad.hlog")
	if err := os.WriteFile(bad, []byte("0.000,1.000,20.0,not-base64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	if _, _, err := ReadLogFile(bad); !errors.As(err, &ie) || ie.Field != "hlog" {
		t.Errorf("unreadable log: %v, want an hlog InputError", err)
	}
}
