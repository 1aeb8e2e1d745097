package redislock_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/plan"
	"lockbench/report"
	"lockbench/results"
	"lockbench/runner"
)

// TestClusterCellPerShard: a cluster cell's result has one row per shard
// (its master, its slots; the per-server rows are the shards'), their
// lock commands add up to the client's own count of the window, their
// locks to the cell's; and the report plans it in shards: a target of
// twice one shard's capacity needs 2, two and a half times 3 (the model:
// ceil(target / one shard's locks/s), the costliest shard's).
func TestClusterCellPerShard(t *testing.T) {
	redistest.Require(t)
	dir := t.TempDir()
	doc := "cells:\n  - name: cluster-shards\n    settings: {topology: cluster, workers: 16, duration: 2s, warmup: 1s}\n"
	sc, err := plan.Parse(t.Name()+".yaml", []byte(doc), false) // a benchmark cell
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runner.Run(context.Background(), sc, cells, runner.Options{Scenario: t.Name(), Log: t.Output(), Dir: dir})
	if err == nil {
		err = out.Err
	}
	if err != nil || len(out.Cells) != 1 {
		t.Fatalf("run: %v", err)
	}
	r := out.Cells[0].Combined
	checkShardRows(t, r)
	checkShardPlan(t, dir, results.ShardCapacity(r.Shards))
}

// checkShardRows: 3 shards covering the 16384 slots, each a row of the
// servers' CPU and of the command cost.
func checkShardRows(t *testing.T, r results.Run) {
	t.Helper()
	if len(r.Shards) != 3 || r.Servers == nil || r.CommandCost == nil {
		t.Fatalf("shards %+v, servers %+v, cost %+v; want 3 shards with the servers' and cost rows", r.Shards, r.Servers, r.CommandCost)
	}
	var commands int64
	var locks float64
	slots := 0
	for _, s := range r.Shards {
		_, cpu := r.Servers.PerMaster[s.Server]
		_, cost := r.CommandCost.PerMaster[s.Server]
		if !cpu || !cost || s.Commands <= 0 || s.CPUSeconds < 0 || s.Capacity <= 0 {
			t.Errorf("shard %+v: servers row %v, cost row %v; want both, commands, CPU and a capacity", s, cpu, cost)
		}
		var lo, hi int
		if _, err := fmt.Sscanf(s.Holds, "slots %d-%d", &lo, &hi); err != nil {
			t.Errorf("shard %s holds %q, want slots lo-hi", s.Server, s.Holds)
		}
		slots += hi - lo + 1
		commands += s.Commands
		locks += s.Locks
	}
	if len(r.Servers.PerMaster) != 3 || len(r.CommandCost.PerMaster) != 3 || slots != 16384 {
		t.Errorf("%d servers rows, %d cost rows, %d slots; want 3, 3, 16384", len(r.Servers.PerMaster), len(r.CommandCost.PerMaster), slots)
	}
	// The servers' readings and the client's marks are taken apart at
	// each edge of the window: 10% bounds the commands sent in between
	// (17 of 30 000 measured here).
	var sent int64
	if r.Contention != nil && r.Contention.Commands != nil {
		sent = (*r.Contention.Commands)["sets"] + (*r.Contention.Commands)["releases"]
	}
	if sent == 0 || math.Abs(float64(commands-sent)) > 0.1*float64(sent) {
		t.Errorf("shards' lock commands %d, the client sent %d; want within 10%%", commands, sent)
	}
	if math.Abs(locks-float64(r.Outcomes.Acquired)) > 1e-6*float64(r.Outcomes.Acquired) {
		t.Errorf("shards' locks %.3f, cell acquired %d; want equal", locks, r.Outcomes.Acquired)
	}
}

// checkShardPlan: the report's plan for the cell in dir, at targets of
// 2 and 2.5 times one shard's capacity.
func checkShardPlan(t *testing.T, dir string, shard float64) {
	t.Helper()
	for _, c := range []struct {
		times float64
		want  int
	}{{2, 2}, {2.5, 3}} {
		// A minute's p99 SLO: the one step meets it however loaded the machine.
		s, err := report.Build([]string{dir}, report.Options{TargetRate: c.times * shard, SLOP99: time.Minute, SLOSuccess: 0.99, Formats: []string{"json"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Capacity) != 1 {
			t.Fatalf("capacity rows %+v, want 1", s.Capacity)
		}
		cp := s.Capacity[0]
		t.Logf("target %.0f/s: %s", cp.TargetRate, cp.Note)
		if cp.ShardCapacity != shard || cp.Shards == nil || *cp.Shards != c.want || cp.Groups != nil || !strings.Contains(cp.Note, "a hot key lives on one shard") {
			t.Errorf("target %.1f× one shard (%.0f locks/s): plan %+v; want %d shards, no lock groups, the hot key said", c.times, shard, cp, c.want)
		}
	}
}
