// Package fsyncprobe measures the disk's write-and-fsync latency where a
// run keeps its data: every persistent design's price (Redis' appendfsync
// always, etcd's and ZooKeeper's fsync per write, PostgreSQL's commit)
// stands on it, and a page that does not say it cannot be read on
// another machine.
package fsyncprobe

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// Result is the probe's latencies: the median and p99 of n writes of
// Size bytes, each followed by fdatasync, appended to one file.
type Result struct {
	Dir    string        `json:"dir"`
	Writes int           `json:"writes"`
	Size   int           `json:"bytes_per_write"`
	Median time.Duration `json:"median_ns"`
	P99    time.Duration `json:"p99_ns"`
}

// Size is each write's: a page, as a small log record ends up on disk.
const Size = 4096

// Probe writes n times to a temporary file in dir, syncing each write,
// and removes the file.
func Probe(dir string, n int) (Result, error) {
	if n < 1 {
		return Result{}, fmt.Errorf("fsync probe: %d writes; want at least 1", n)
	}
	f, err := os.CreateTemp(dir, ".fsync-probe-*")
	if err != nil {
		return Result{}, fmt.Errorf("fsync probe in %s: %w", dir, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, Size)
	took := make([]time.Duration, n)
	for i := range took {
		start := time.Now()
		if _, err := f.Write(buf); err != nil {
			return Result{}, fmt.Errorf("fsync probe: %w", err)
		}
		if err := f.Sync(); err != nil {
			return Result{}, fmt.Errorf("fsync probe: %w", err)
		}
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	return Result{Dir: dir, Writes: n, Size: Size, Median: took[(n-1)/2], P99: took[(n*99+99)/100-1]}, nil
}

// String is the probe in words: "fsync of 4 KiB: median 1.2ms, p99 3.4ms
// (200 writes)".
func (r Result) String() string {
	return fmt.Sprintf("write+fsync of %d KiB: median %v, p99 %v (%d writes in %s)", r.Size/1024, r.Median.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Writes, r.Dir)
}
