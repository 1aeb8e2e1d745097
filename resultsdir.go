package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"lockbench/results"
)

// resultsDir is a results directory that sweep or chaos is writing: the
// manifest is rewritten after every cell, so an interrupted run leaves a
// directory the report reads.
type resultsDir struct {
	path string
	man  *results.Manifest
}

// createResultsDir makes out (default results/NAME-YYYYMMDD-HHMMSS) with
// its cells/ folder and writes the manifest. A directory that is not empty
// is refused (bad input): results are never mixed.
func createResultsDir(out string, man *results.Manifest) (*resultsDir, error) {
	dir := out
	if dir == "" {
		dir = filepath.Join("results", man.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, usagef("out: %s exists and is not empty; choose another --out", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "cells"), 0o755); err != nil {
		return nil, fmt.Errorf("out: %w", err)
	}
	d := &resultsDir{path: dir, man: man}
	return d, d.writeManifest()
}

// writeManifest rewrites manifest.json atomically.
func (d *resultsDir) writeManifest() error {
	return results.WriteFileAtomic(filepath.Join(d.path, "manifest.json"), func(w io.Writer) error { return results.WriteJSON(w, d.man) })
}

// finish stamps the end of the run (and whether it was interrupted) into
// the manifest.
func (d *resultsDir) finish(interrupted bool) error {
	d.man.FinishedAt = time.Now().UTC()
	d.man.Interrupted = interrupted
	return d.writeManifest()
}

// interruptible is a context that the first SIGINT/SIGTERM cancels, so the
// run winds down and keeps what it measured; a second one exits at once
// (the default signal handling is restored).
func interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
