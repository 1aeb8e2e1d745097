package plan

// A Design is a lock as a user would deploy it, for lockbench choose: its
// settings over the matrix's shared work (a setting "unset" takes the
// shared one out: an advisory lock has no lease). FixedTTL: its lock
// expires at its TTL whatever the holder does (Redis'), where a session's
// keeps itself alive.
type Design struct {
	Name, Settings string
	FixedTTL       bool
}

// redisDesigns are Redlock's, one master's and a replicated one's, each
// run as Redis' lock clients run them: a watchdog renews the lease in the
// background while the holder lives (Redisson's lockWatchdogTimeout, here
// the cells' TTL, renewed every third of it). single-fixed-ttl is the one
// lock of fixed TTL kept, to show what the watchdog changes. rueidislock is
// rueidis' own lock on one master (redislock/rueidislockdriver: 3 keys, a
// majority of them; extended every ttl/2 by itself).
var redisDesigns = []Design{
	{"redlock-5-mux", "topology: redlock, local: 5, persistence: none, mode: multiplexed, watchdog: true", false},
	{"redlock-5-seq", "topology: redlock, local: 5, persistence: none, mode: sequential, watchdog: true", false},
	{"single", "topology: single, local: 1, persistence: none, watchdog: true", false},
	{"single-fixed-ttl", "topology: single, local: 1, persistence: none", true},
	{"rueidislock", "topology: single, local: 1, persistence: none, driver: rueidislock", false},
	{"single-aof-always", "topology: single, local: 1, persistence: aof-always, watchdog: true", false},
	{"replicated-wait0", "topology: replicated, replicas: 2, sentinels: 3, wait_replicas: 0, persistence: none, watchdog: true", false},
	{"replicated-wait1", "topology: replicated, replicas: 2, sentinels: 3, wait_replicas: 1, persistence: none, watchdog: true", false},
	{"replicated-wait2", "topology: replicated, replicas: 2, sentinels: 3, wait_replicas: 2, persistence: none, watchdog: true", false},
}

// Designs are each registered topology's, in TopologyNames' order
// (Redis' first).
func Designs() []Design {
	var out []Design
	for _, n := range TopologyNames() {
		out = append(out, topologyNamed(n).Designs()...)
	}
	return out
}

// DesignNames are Designs' names, in order.
func DesignNames() []string {
	var out []string
	for _, d := range Designs() {
		out = append(out, d.Name)
	}
	return out
}

// DesignNamed finds a design by name.
func DesignNamed(name string) (Design, bool) {
	for _, d := range Designs() {
		if d.Name == name {
			return d, true
		}
	}
	return Design{}, false
}
