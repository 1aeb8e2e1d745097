package faults_test

import (
	"context"
	"testing"
	"time"

	"lockbench/faults"
)

// fakeProcess is a replicated set's process the scheduler can crash.
type fakeProcess struct {
	fakeMember
	name string
}

func (f fakeProcess) Name() string  { return f.name }
func (f fakeProcess) Pause() error  { return nil }
func (f fakeProcess) Resume() error { return nil }

// A crash by role kills the replicas and monitors named; a monitor's
// event says it holds no lock keys by what it is (the runner then does not
// call its crash one that hit no lock), a replica's does not.
func TestCrashOfAMonitorHoldsNoKeys(t *testing.T) {
	tg := faults.Targets{Masters: []faults.Master{fakeMember{"m"}},
		Replicas: []faults.Process{fakeProcess{fakeMember{"r"}, "replica 1"}},
		Monitors: []faults.Process{fakeProcess{fakeMember{"s"}, "sentinel 0"}}}
	specs := []faults.Spec{{Kind: faults.Crash, Replicas: []int{0}, Sentinels: []int{0}, Restart: faults.RestartNever}}
	s, err := faults.NewScheduler(context.Background(), specs, tg)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(time.Now(), specs)
	var events []faults.Event
	for deadline := time.Now().Add(10 * time.Second); len(events) < 2 && time.Now().Before(deadline); events = s.Events() {
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	if len(events) != 2 || events[0].Target != "replica 1 (r)" || events[0].NoKeys || events[1].Target != "sentinel 0 (s)" || !events[1].NoKeys {
		t.Fatalf("events %+v; want the replica's crash, then the monitor's holding no keys", events)
	}
}
