package service_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"lockbench/pool"
	"lockbench/results"
	"lockbench/service"
	"lockbench/workloads"
)

// The runner measures every benchmark cell one way (issue 54): what a
// client measures better than its plain writes reaches the cell through
// pool's optional capabilities, which any service may offer — here the
// fake's table with its own per-server baseline, its own record of the
// result and a clean-up of its prefix. Before them, only Redis' client
// could (it opened its own cell): this test fails on that code.
func TestCellCapabilitiesAnyServiceMayOffer(t *testing.T) {
	service.Register(measuredFake{})
	c := runOne(t, `settings: {topology: fake-measured, workers: 2, keys: 4, duration: 300ms, warmup: 0s, hold: 1ms}`, false)
	r := c.Combined
	switch {
	case r.Outcomes.Acquired == 0:
		t.Fatal("no acquisitions: the cell measured nothing")
	case r.BaselineRTT["table"].Count != 3:
		t.Errorf("per-server baseline %+v; want the client's own (3 samples on \"table\")", r.BaselineRTT)
	case len(r.Warnings) == 0 || r.Warnings[0] != "recorded by the client":
		t.Errorf("warnings %q; want the client's own record first", r.Warnings)
	case cleanedUp.Load() != 1:
		t.Errorf("clean-up ran %d times; want once, before the client closed", cleanedUp.Load())
	}
}

var cleanedUp atomic.Int32

// measuredFake is the fake whose client offers capabilities.
type measuredFake struct{ fake }

func (measuredFake) Name() string { return "fake-measured" }

func (f measuredFake) NewClient(ctx context.Context, raw json.RawMessage) (service.Client, error) {
	cl, err := f.fake.NewClient(ctx, raw)
	if err != nil {
		return nil, err
	}
	return &measuredClient{client: cl.(*client)}, nil
}

type measuredClient struct{ *client }

func (*measuredClient) Baselines(context.Context, string) (pool.Baselines, error) {
	d := []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	return pool.Baselines{PerServer: map[string][]time.Duration{"table": d}, Parallel: d}, nil
}

func (*measuredClient) RecordCell(res *results.Run, _ *workloads.Stats) {
	res.Warnings = append(res.Warnings, "recorded by the client")
}

func (*measuredClient) Cleanup(context.Context, string) { cleanedUp.Add(1) }
