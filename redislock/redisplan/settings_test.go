package redisplan

import (
	"testing"
	"time"

	"lockbench/plan"
	"lockbench/redislock/engine"
)

// A replicated cell's engine config: its checks see placeholder
// Sentinels (the local set's three) and no masters, and pass; the config
// a client gets has neither (the servers' addresses come when they run).
func TestEngineConfigOfAReplicatedCell(t *testing.T) {
	s := plan.Defaults()
	s.Topology, s.WaitReplicas, s.WaitTimeout = "replicated", 2, plan.Duration(time.Second)
	ec, err := checkedConfig(s)
	if err != nil || ec.Topology != engine.Replicated || len(ec.Masters) != 0 || len(ec.SentinelAddrs) != 3 || ec.WaitReplicas != 2 || ec.Validate() != nil {
		t.Errorf("engine config of a replicated cell: %+v (%v)", ec, err)
	}
	if ec, err = EngineConfig(s); err != nil || ec.Masters != nil || ec.SentinelAddrs != nil || ec.MasterSet != plan.DefaultMasterSet || ec.WaitTimeout != time.Second {
		t.Errorf("a client's engine config: %+v (%v)", ec, err)
	}
}

// plan's defaults are the engine's: a plain run's client is the
// engine's reference one.
func TestPlanDefaultsAreTheEngines(t *testing.T) {
	ec, err := EngineConfig(plan.Defaults())
	want := engine.DefaultConfig()
	want.Topology = engine.Redlock
	if err != nil || ec.Mode != want.Mode || ec.Wait != want.Wait || ec.TTL != want.TTL || ec.Timeout != want.Timeout ||
		ec.DriftFactor != want.DriftFactor || ec.Retries != want.Retries || ec.RetryMin != want.RetryMin || ec.RetryMax != want.RetryMax ||
		ec.Strategy != want.Strategy || ec.BackoffBase != want.BackoffBase || ec.BackoffCap != want.BackoffCap || ec.NotifyTimeout != want.NotifyTimeout || ec.MaxBatch != want.MaxBatch ||
		ec.Dispatchers != want.Dispatchers || ec.FlushDelay != want.FlushDelay || ec.Topology != want.Topology {
		t.Errorf("plan's defaults make %+v (%v); the engine's are %+v", ec, err, want)
	}
}
