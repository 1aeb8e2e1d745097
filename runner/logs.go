package runner

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/results"
)

// cellLogs are one measurement's interval logs (DIR/cells/STEM.METRIC.hlog),
// written under temp names and renamed once the measurement is done, so an
// interrupted or failed cell leaves no half log. A benchmark cell's worker
// loop streams into them; a fault cell writes its clients' merged
// intervals. A nil *cellLogs writes nothing (run without a directory).
type cellLogs struct {
	files map[int]*os.File // by report metric index
}

// openCellLogs creates the temp files of stem's logs under dir/cells.
func openCellLogs(dir, stem string, metrics []int) (*cellLogs, error) {
	if dir == "" {
		return nil, nil
	}
	cells := filepath.Join(dir, "cells")
	if err := os.MkdirAll(filepath.Dir(filepath.Join(cells, stem)), 0o755); err != nil {
		return nil, fmt.Errorf("out: %w", err)
	}
	l := &cellLogs{files: map[int]*os.File{}}
	for _, m := range metrics {
		name := "." + filepath.Base(stem) + "." + results.MetricName(m) + ".hlog.tmp"
		f, err := os.Create(filepath.Join(cells, filepath.Dir(stem), name))
		if err != nil {
			l.abort()
			return nil, fmt.Errorf("out: %w", err)
		}
		l.files[m] = f
	}
	return l, nil
}

// writers are the files for the worker loop to stream into (nil: none).
func (l *cellLogs) writers() map[int]io.Writer {
	if l == nil {
		return nil
	}
	out := map[int]io.Writer{}
	for m, f := range l.files {
		out[m] = f
	}
	return out
}

// write writes whole logs of intervals by metric name (a fault cell's).
func (l *cellLogs) write(iv map[string][]*hdrhistogram.Histogram) error {
	if l == nil {
		return nil
	}
	for m, f := range l.files {
		name := results.MetricName(m)
		if err := results.WriteIntervalLog(f, name, iv[name]); err != nil {
			return fmt.Errorf("out: %w", err)
		}
	}
	return nil
}

// commit closes the logs and gives them their final names.
func (l *cellLogs) commit() error {
	if l == nil {
		return nil
	}
	for _, f := range l.files {
		if err := f.Close(); err != nil {
			return fmt.Errorf("out: %w", err)
		}
		final := filepath.Join(filepath.Dir(f.Name()), strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.Name()), "."), ".tmp"))
		if err := os.Rename(f.Name(), final); err != nil {
			return fmt.Errorf("out: %w", err)
		}
	}
	l.files = nil
	return nil
}

// abort removes what commit did not keep.
func (l *cellLogs) abort() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Close()
		os.Remove(f.Name())
	}
}
