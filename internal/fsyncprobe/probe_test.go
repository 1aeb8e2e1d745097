package fsyncprobe

import (
	"strings"
	"testing"
)

// The probe measures every write and orders its figures; it refuses a
// count that measures nothing and a directory it cannot write.
func TestProbe(t *testing.T) {
	r, err := Probe(t.TempDir(), 20)
	switch {
	case err != nil:
		t.Fatal(err)
	case r.Writes != 20 || r.Median <= 0 || r.P99 < r.Median:
		t.Fatalf("%+v: want 20 writes, 0 < median <= p99", r)
	case !strings.Contains(r.String(), "write+fsync of 4 KiB: median "):
		t.Fatalf("%q", r.String())
	}
	if _, err := Probe(t.TempDir(), 0); err == nil {
		t.Error("0 writes: no error")
	}
	if _, err := Probe("/nonexistent/dir", 5); err == nil {
		t.Error("a directory that does not exist: no error")
	}
}
