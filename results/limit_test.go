package results

import (
	"math"
	"strings"
	"testing"
)

// limitRun is a synthetic result: 2 cores, five local masters sharing them.
func limitRun(busy, client, servers float64, masterCore ...float64) *Run {
	r := &Run{
		Outcomes:         Outcomes{Tally: Tally{Acquired: 100_000}},
		AcquireLatency:   Latency{P50: 800, P99: 2000, Count: 100_000},
		BaselineParallel: &Latency{P50: 100},
		Client:           Client{Cores: 2, CPUShare: client},
		Machine: &CPUSplit{Cores: 2, BusyShare: busy, ClientShare: client, ServersShare: servers,
			OtherShare: max(0, busy-client-servers), MastersShareMachine: true, MasterCoreShare: map[string]float64{}},
	}
	for i, s := range masterCore {
		r.Machine.MasterCoreShare[string(rune('a'+i))] = s
	}
	return r
}

func TestLimitRules(t *testing.T) {
	open := func(r *Run, offered, unserved int64, lagP50 float64) *Run {
		r.OpenLoop = &OpenLoop{OfferedRate: 40_000, Offered: offered, Unserved: unserved, PacerLag: Latency{P50: lagP50, Count: offered}}
		return r
	}
	proxied := func(r *Run, share float64) *Run { r.Machine.ProxyShare = &share; return r }
	timedOut := func(r *Run) *Run { r.Outcomes.Errors = r.Outcomes.Acquired; return r }
	contended := limitRun(0.5, 0.2, 0.2, 0.1)
	contended.Outcomes.NotAcquired = 5_000
	cases := []struct {
		name     string
		run      *Run
		want     string
		evidence []string
	}{
		// The case: a 2-core box full of lockbench and five
		// masters, none of them near a core: the machine, not the servers.
		{"shared box saturated, masters light", limitRun(0.97, 0.46, 0.40, 0.16, 0.16, 0.17, 0.15, 0.16), LimitMachine,
			[]string{"machine 97% busy", "lockbench 46%", "servers 40%", "busiest master 17% of a core"}},
		{"saturated box, busiest master 0.69 of a core", limitRun(0.95, 0.4, 0.5, 0.69, 0.2), LimitMachine, nil},
		{"saturated box, timeouts named", timedOut(limitRun(0.99, 0.06, 0.03, 0.02)), LimitMachine, []string{"50% of acquire attempts timed out or errored"}},
		{"saturated box, busiest master 0.7 of a core", limitRun(0.95, 0.4, 0.5, 0.7, 0.2), LimitServer, []string{"70% of a core"}},
		{"idle box, one master at a full core", limitRun(0.6, 0.1, 0.5, 0.95), LimitServer, []string{"95% of a core"}},
		{"generator out of CPU", limitRun(0.92, 0.85, 0.05, 0.03), LimitGenerator, []string{"lockbench used 85% of the 2 CPUs"}},
		{"proxy named", proxied(limitRun(0.95, 0.85, 0.05, 0.03), 0.4), LimitGenerator, []string{"--net-latency proxy 40%"}},
		{"contention first", contended, LimitContention, []string{"4.76% of acquire attempts found the lock taken"}},
		{"open loop served", open(limitRun(0.5, 0.2, 0.2, 0.1), 400_000, 10, 50), LimitNone, []string{"offered 40,000/s were served"}},
		{"open loop, pacer late", open(limitRun(0.6, 0.3, 0.2, 0.1), 400_000, 20_000, 2500), LimitGenerator, []string{"pacer"}},
		{"open loop unserved, CPUs idle", open(limitRun(0.5, 0.2, 0.2, 0.1), 400_000, 20_000, 50), LimitLatency, []string{"5% of the offered starts found no free worker"}},
		{"closed loop, CPUs idle", limitRun(0.3, 0.1, 0.1, 0.05), LimitLatency, []string{"machine 30% busy", "8.0× the parallel SET"}},
	}
	for _, c := range cases {
		got := LimitOf(c.run)
		if got.By != c.want {
			t.Errorf("%s: by %q (%s), want %q", c.name, got.By, got.Evidence, c.want)
			continue
		}
		for _, e := range c.evidence {
			if !strings.Contains(got.Evidence, e) {
				t.Errorf("%s: evidence %q lacks %q", c.name, got.Evidence, e)
			}
		}
	}
}

// The rule, over a grid: a saturated shared box is never blamed on
// the servers while the busiest master uses less than 0.7 of a core.
func TestLimitNeverBlamesLightServers(t *testing.T) {
	for busy := 0.90; busy <= 1.0; busy += 0.02 {
		for client := 0.0; client <= busy; client += 0.1 {
			for core := 0.0; core < ServerSharedCore; core += 0.05 {
				r := limitRun(busy, client, busy-client, core, core/2)
				if got := LimitOf(r); got.By == LimitServer {
					t.Fatalf("busy %.2f client %.2f busiest master %.2f: blamed the server (%s)", busy, client, core, got.Evidence)
				}
			}
		}
	}
}

func TestLimitNotJudged(t *testing.T) {
	got := LimitOf(&Run{})
	if got.By != LimitNone || !strings.Contains(got.Evidence, "not judged") {
		t.Errorf("no attempts: %+v, want none/not judged", got)
	}
	// Without a machine split (an old result) the client's own share and
	// INFO's busiest master still decide.
	r := &Run{Outcomes: Outcomes{Tally: Tally{Acquired: 10}}, Client: Client{Cores: 2, CPUShare: 0.9}, Servers: &Servers{BusiestShare: 0.2}}
	if got := LimitOf(r); got.By != LimitGenerator {
		t.Errorf("old result, client 90%%: %+v, want generator", got)
	}
	r.Client.CPUShare, r.Servers.BusiestShare = 0.3, 0.95
	if got := LimitOf(r); got.By != LimitServer {
		t.Errorf("old result, master 95%% of a core: %+v, want server", got)
	}
}

// Pinned: lockbench's share is judged against the CPUs it may use.
func TestLimitPinnedGenerator(t *testing.T) {
	r := limitRun(0.7, 0.45, 0.25, 0.25)
	r.Machine.ClientCPUs, r.Machine.LocalCPUs = []int{1}, []int{0}
	if got := LimitOf(r); got.By != LimitGenerator || !strings.Contains(got.Evidence, "90% of the 1 CPUs") {
		t.Errorf("lockbench at 0.9 of its one CPU: %+v, want generator", got)
	}
}

func TestRedisCostArithmetic(t *testing.T) {
	before := map[string]CommandCount{"set": {Calls: 100, Usec: 150}, "evalsha": {Calls: 50, Usec: 200}, "info": {Calls: 3, Usec: 90}}
	masters := []MasterWindow{
		{Addr: "a", Before: before, CPUSeconds: 0.5, After: map[string]CommandCount{
			"set": {Calls: 10_100, Usec: 15_150}, "evalsha": {Calls: 10_050, Usec: 20_200}, "eval": {Calls: 2, Usec: 10}, "info": {Calls: 4, Usec: 9000}}},
		{Addr: "b", Before: before, CPUSeconds: -1, After: map[string]CommandCount{
			"set": {Calls: 10_100, Usec: 10_150}, "evalsha": {Calls: 10_050, Usec: 10_200}}},
		{Addr: "down", Before: nil, After: before, CPUSeconds: -1},
	}
	rc := NewCommandCost(masters, 10_000, 2)
	if rc == nil || len(rc.PerMaster) != 2 {
		t.Fatalf("cost %+v, want two masters (one had no counters)", rc)
	}
	a, b := rc.PerMaster["a"], rc.PerMaster["b"]
	// a: (15000 + 20000 + 10) µs / 10000 cycles = 3.501 µs; INFO is not a lock command.
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if a.Usec != 35_010 || !near(a.CommandMicrosCycle, 3.501) || !near(a.ProjectedRate, 1e6/3.501) || a.Calls["eval"] != 2 || a.Calls["set"] != 10_000 {
		t.Errorf("master a %+v", a)
	}
	if !near(a.CPUMicrosCycle, 50) || b.CPUMicrosCycle != 0 {
		t.Errorf("cpu per cycle a %v b %v, want 50 and unknown", a.CPUMicrosCycle, b.CPUMicrosCycle)
	}
	if !near(b.CommandMicrosCycle, 2) || !near(rc.CommandMicrosCycle, 3.501) || !near(rc.ProjectedRate, 1e6/3.501) ||
		!near(rc.ProjectedRateCPU, 20_000) || !near(rc.MeasuredRate, 5000) {
		t.Errorf("group cost %+v: the costliest master sets the pace", rc)
	}
	// A reset counter (restart) counts from zero.
	reset := NewCommandCost([]MasterWindow{{Addr: "r", Before: map[string]CommandCount{"set": {Calls: 900, Usec: 900}},
		After: map[string]CommandCount{"set": {Calls: 100, Usec: 300}}, CPUSeconds: -1}}, 100, 1)
	if reset.PerMaster["r"].Usec != 300 {
		t.Errorf("reset counter: %+v, want 300 µs since the reset", reset.PerMaster["r"])
	}
	if NewCommandCost(masters, 0, 2) != nil {
		t.Error("no cycles: want no cost, not a division by zero")
	}
}

// An etcd member over a core is not "the server" (etcd is not one
// thread); a Redis master is.
func TestLimitEtcdMemberNotOneThread(t *testing.T) {
	redis := limitRun(0.7, 0.2, 0.5, 1.05)
	etcd := limitRun(0.7, 0.2, 0.5, 1.05)
	etcd.Config = &CellConfig{Service: &ServiceSettings{Baseline: "etcd's Put round trip"}}
	if l := LimitOf(redis); l.By != LimitServer {
		t.Fatalf("redis master at 105%% of a core: %s, want server", l.By)
	}
	if l := LimitOf(etcd); l.By == LimitServer {
		t.Fatalf("etcd member at 105%% of a core: %s (%s), want not server", l.By, l.Evidence)
	}
}
