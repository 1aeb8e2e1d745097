package plan

import (
	"errors"
	"strconv"
	"strings"

	"lockbench/internal/redact"
	"lockbench/results"

	"github.com/spf13/pflag"
)

// durationFlag binds a plan.Duration to pflag.
type durationFlag struct{ d *Duration }

func (f durationFlag) String() string { return f.d.String() }
func (f durationFlag) Type() string   { return "duration" }
func (f durationFlag) Set(s string) error {
	d, err := results.ParseDuration(strings.TrimSpace(s))
	if err == nil {
		*f.d = d
	}
	return err
}

// addrsFlag is --masters (and --sentinel-addrs): comma-separated like
// pflag's string slice, but its Set never fails, because pflag would quote
// the whole value (password included) in its error; each address is
// checked, redacted, by Validate.
type addrsFlag struct {
	m       *[]string
	changed bool
}

func (f *addrsFlag) String() string {
	if len(*f.m) == 0 {
		return ""
	}
	shown := make([]string, len(*f.m))
	for i, m := range *f.m {
		shown[i] = redact.URL(m)
	}
	return "[" + strings.Join(shown, ",") + "]"
}
func (f *addrsFlag) Type() string { return "strings" }
func (f *addrsFlag) Set(s string) error {
	if !f.changed {
		*f.m, f.changed = nil, true
	}
	*f.m = append(*f.m, strings.Split(s, ",")...)
	return nil
}

// Append, Replace and GetSlice make it a pflag.SliceValue (ApplyChanged
// copies slices through them, never through the redacted String).
func (f *addrsFlag) Append(v string) error { *f.m = append(*f.m, v); return nil }
func (f *addrsFlag) Replace(v []string) error {
	*f.m = append([]string(nil), v...)
	return nil
}
func (f *addrsFlag) GetSlice() []string { return append([]string(nil), *f.m...) }

// BindFlags registers a benchmark's settings as flags on fs, bound to s;
// the flag names are the YAML names with "_" written as "-".
func BindFlags(fs *pflag.FlagSet, s *Settings) { benchmark.bindFlags(fs, s) }

// BindFaultFlags registers a fault scenario's settings as flags on fs,
// bound to s.
func BindFaultFlags(fs *pflag.FlagSet, s *Settings) { faultScenario.bindFlags(fs, s) }

// bindFlags registers the settings the kind takes: every setting's flag,
// as bindSettings binds it, kept when the kind takes its setting.
func (k *kind) bindFlags(fs *pflag.FlagSet, s *Settings) {
	all := pflag.NewFlagSet("all", pflag.ContinueOnError)
	bindSettings(all, s)
	all.VisitAll(func(f *pflag.Flag) {
		if k.takes(settingAlias(strings.ReplaceAll(f.Name, "-", "_"))) {
			if u, ok := k.usage[f.Name]; ok {
				f.Usage = u
			}
			fs.AddFlag(f)
		}
	})
	if k.oldMasters {
		// --masters N: the old name of --local; hidden, as masters are
		// addresses everywhere else.
		fs.Var(oldMastersFlag{s}, "masters", "old name of --local")
		_ = fs.MarkHidden("masters")
	}
	markGiven(fs, s)
}

// bindSettings registers every setting, of either kind, as a flag on fs.
func bindSettings(fs *pflag.FlagSet, s *Settings) {
	dur := func(p *Duration, name, usage string) { fs.Var(durationFlag{p}, name, usage) }
	fs.Var(&addrsFlag{m: &s.Masters}, "masters", "masters as addresses (comma-separated); default: start --local masters")
	fs.Var(localFlag{s}, "local", "start this many local servers on 127.0.0.1: a lock service's masters or members (its own default)")
	fs.StringVar(&s.Persistence, "persistence", s.Persistence, "persistence: none, aof-no, aof-everysec, aof-always (local masters are started so; external ones are set with CONFIG SET by sweep)")
	fs.StringVar(&s.LocalCPUs, "local-cpus", s.LocalCPUs, "pin the local masters to these CPUs (e.g. 0 or 2-3) and lockbench to the others")
	fs.StringVar(&s.Embedded, "embedded", s.Embedded, "embedded in-process masters when the server program is missing: auto, never, always")
	dur(&s.NetLatency, "net-latency", "delay every master's replies by this much through an embedded proxy (whole ms), as across a network")
	dur(&s.NetJitter, "net-jitter", "random ± variation of --net-latency (whole ms)")
	fs.StringVar(&s.TLSCA, "tls-ca", s.TLSCA, "a lock service's TLS servers: CA bundle (PEM) to verify the servers")
	fs.StringVar(&s.TLSCert, "tls-cert", s.TLSCert, "a lock service's TLS servers: client certificate (PEM), with --tls-key")
	fs.StringVar(&s.TLSKey, "tls-key", s.TLSKey, "a lock service's TLS servers: client key (PEM)")
	fs.BoolVar(&s.TLSInsecure, "tls-insecure", s.TLSInsecure, "a lock service's TLS servers: skip server certificate verification (test setups only)")
	bindTopologyFlags(fs, s)
	fs.StringVar(&s.Driver, "driver", s.Driver, "lock client of the masters' topologies")
	fs.StringVar(&s.Client, "client", s.Client, "an external lock client: its adapter's command (docs/adapters.md), run in place of lockbench's client on the design's servers (topology redlock or single)")
	fs.StringVar(&s.Mode, "mode", s.Mode, "acquisition: sequential (master after master) or multiplexed (all at once)")
	fs.StringVar(&s.Wait, "wait", s.Wait, "wait for: all masters, or quorum (stop once the outcome is decided)")
	dur(&s.TTL, "ttl", "lock time to live")
	dur(&s.Timeout, "timeout", "per-master timeout of one command (must be below --ttl)")
	fs.Float64Var(&s.DriftFactor, "drift-factor", s.DriftFactor, "clock drift allowance as a share of the TTL (plus 2ms)")
	fs.IntVar(&s.Retries, "retries", s.Retries, "extra acquire attempts after a failure")
	dur(&s.RetryMin, "retry-delay-min", "random retry delay, lower bound")
	dur(&s.RetryMax, "retry-delay-max", "random retry delay, upper bound")
	fs.StringVar(&s.WaitStrategy, "wait-strategy", s.WaitStrategy, "how a caller waits between attempts: retry (random delay in [retry-delay-min, max]), backoff (exponential, full jitter), spin (none), notify (until the holder's release is published, at most --notify-timeout)")
	dur(&s.BackoffBase, "backoff-base", "wait-strategy backoff: the first delay's ceiling")
	dur(&s.BackoffCap, "backoff-cap", "wait-strategy backoff: the largest delay's ceiling")
	dur(&s.NotifyTimeout, "notify-timeout", "wait-strategy notify: the longest wait for a release message (a lost one costs this); 0: the ttl")
	dur(&s.WaitTime, "wait-time", "keep a caller trying this long instead of --retries more attempts; 0: retries decide")
	dur(&s.TTL, "lease-time", "another name of --ttl")
	fs.IntVar(&s.Batch, "batch", s.Batch, "most commands per pipelined write to one master")
	fs.IntVar(&s.Dispatchers, "dispatchers", s.Dispatchers, "pipelined batches in flight per master")
	dur(&s.FlushDelay, "flush-delay", "the client's flush delay per master (0..1ms): less CPU, a little more latency")
	fs.StringVar(&s.Load, "load", s.Load, "load model: closed (--workers loop) or open (--rate acquires/s, latency from the intended start)")
	fs.IntVar(&s.Workers, "workers", s.Workers, "closed loop: concurrent workers; open loop: most acquires in flight")
	fs.Float64Var(&s.Rate, "rate", s.Rate, "open loop: acquires per second (needs --load open)")
	dur(&s.Duration, "duration", "measured time")
	dur(&s.Warmup, "warmup", "unmeasured time before the measured window")
	fs.Uint64Var(&s.Keys, "keys", s.Keys, "number of distinct lock keys (up to 100M; named on demand)")
	fs.StringVar(&s.Distribution, "distribution", s.Distribution, "key choice: uniform, zipf, hotspot, single")
	fs.Float64Var(&s.ZipfExponent, "zipf-exponent", s.ZipfExponent, "zipf exponent θ (0.99 is YCSB's)")
	fs.Float64Var(&s.HotspotOps, "hotspot-ops", s.HotspotOps, "hotspot: share of operations on the hot keys")
	fs.Float64Var(&s.HotspotKeys, "hotspot-keys", s.HotspotKeys, "hotspot: share of keys that are hot")
	dur(&s.Hold, "hold", "how long a worker holds each lock (mean for uniform/exponential)")
	fs.StringVar(&s.HoldDist, "hold-distribution", s.HoldDist, "hold time: fixed, uniform (0..2×hold), exponential")
	fs.BoolVar(&s.AutoExtend, "auto-extend", s.AutoExtend, "extend locks whose hold outlives a third of the TTL")
	fs.BoolVar(&s.Watchdog, "watchdog", s.Watchdog, "renew every held lock in the background every TTL/3 while its holder lives (a failed renewal tells the holder)")
	fs.StringVar(&s.KeyPrefix, "key-prefix", s.KeyPrefix, "key prefix (default lockbench:RUNID:)")
	fs.StringVar(&s.Segment, "segment", s.Segment, "multi-machine: run segment i of n (\"1/2\"): workers, rate and keyspace are split")
	fs.StringVar(&s.StartAt, "start-at", s.StartAt, "multi-machine: start the load at this RFC 3339 time, e.g. 2026-11-30T10:00:00Z")
	fs.BoolVar(&s.Force, "force", s.Force, "run even when keys under the key prefix already exist (another run's?); sweep: run a matrix of more than 10,000 cells")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "random seed for key choice (0: random)")
	bindFaultPart(fs, s)
	fs.VisitAll(func(f *pflag.Flag) {
		if u, ok := flagUsage[f.Name]; ok {
			f.Usage = u
		}
	})
}

// flagUsage is a flag's help in the words of the service that owns the
// setting (RegisterFlagUsage), in place of the generic words above.
var flagUsage = map[string]string{}

// RegisterFlagUsage makes usage the help of the flag named name: a
// service words the flags of its own settings (Redis': --masters,
// --driver, --watchdog), and its part of a shared one (--local, --tls-ca).
// Called from a service's init, before any flag is bound.
func RegisterFlagUsage(name, usage string) { flagUsage[name] = usage }

// bindFaultPart registers the settings only a fault scenario takes.
func bindFaultPart(fs *pflag.FlagSet, s *Settings) {
	fs.IntVar(&s.Clients, "clients", s.Clients, "lock clients, each with its own connections")
	fs.StringVar(&s.ClientMode, "client-mode", s.ClientMode, "goroutines or processes (one lockbench process per client)")
	fs.Int64Var(&s.Acquisitions, "acquisitions", s.Acquisitions, "end a cell after this many acquisitions (0: run for duration)")
	fs.BoolVar(&s.Fencing, "fencing", s.Fencing, "fencing tokens: the resource refuses stale reads and writes")
	fs.BoolVar(&s.GuardedWrite, "guarded-write", s.GuardedWrite, dataTopologies()+": keep the protected counter in the lock service, written only while the lock is held")
	fs.Var(durationFlag{&s.LongHold}, "long-hold", "each client's first worker holds this long instead, so that a fault meets a holder inside its section (0: as the others)")
	fs.BoolVar(&s.CheckValidity, "check-validity", s.CheckValidity, "skip a write when the lock's validity ran out during the hold")
	fs.IntVar(&s.Calls, "calls", s.Calls, "calls per worker (each waits until it holds the lock or gives up after wait-time), then the worker stops (0: until the cell ends)")
	fs.Int64Var(&s.Stock, "stock", s.Stock, "the protected counters count down from this stock; expect stock_left (0: no stock)")
	fs.Int64Var(&s.MinAcquisitions, "min-acquisitions", s.MinAcquisitions, "a cell with fewer acquisitions or acknowledged writes judged nothing and fails (0: no minimum)")
}

// markGiven makes every settings flag on fs record, when set, that its
// setting was given (Settings.Given), whatever the value.
func markGiven(fs *pflag.FlagSet, s *Settings) {
	fs.VisitAll(func(f *pflag.Flag) {
		as := strings.ReplaceAll(f.Name, "-", "_")
		g := givenValue{f.Value, s, settingAlias(as), as}
		switch v := f.Value.(type) {
		case givenValue, givenSlice, oldMastersFlag: // marked already; --masters N marks local itself
		case pflag.SliceValue:
			f.Value = givenSlice{g, v}
		default:
			f.Value = g
		}
	})
}

// givenValue is a flag's value that marks its setting given when set, by
// its name and the name it was given as (a service's own for servers).
type givenValue struct {
	pflag.Value
	s        *Settings
	name, as string
}

func (g givenValue) mark() {
	g.s.MarkGiven(g.name)
	if _, own := serversAlias(g.as); own {
		g.s.MarkGiven(g.as) // by the service's own name too: another topology refuses it
	}
}

func (g givenValue) Set(v string) error {
	if err := g.Value.Set(v); err != nil {
		return err
	}
	g.mark()
	return nil
}

// IsBoolFlag keeps a bool flag's bare form (--fencing).
func (g givenValue) IsBoolFlag() bool {
	b, ok := g.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// givenSlice is givenValue of a slice flag (ApplyChangedWith replaces
// slices whole).
type givenSlice struct {
	givenValue
	sv pflag.SliceValue
}

func (g givenSlice) Append(v string) error {
	g.mark()
	return g.sv.Append(v)
}
func (g givenSlice) Replace(v []string) error {
	g.mark()
	return g.sv.Replace(v)
}
func (g givenSlice) GetSlice() []string { return g.sv.GetSlice() }

// bindTopologyFlags registers the topology and the replicated set's settings.
func bindTopologyFlags(fs *pflag.FlagSet, s *Settings) {
	dur := func(p *Duration, name, usage string) { fs.Var(durationFlag{p}, name, usage) }
	fs.StringVar(&s.Topology, "topology", s.Topology, topologyUsage())
	fs.IntVar(&s.Replicas, "replicas", s.Replicas, "replicated: local replicas of the master")
	fs.IntVar(&s.Sentinels, "sentinels", s.Sentinels, "replicated: local Sentinels watching the set (a count; external ones: --sentinel-addrs)")
	fs.Var(&addrsFlag{m: &s.SentinelAddrs}, "sentinel-addrs", "replicated, an external set: its Sentinels as addresses (comma-separated), with --master-set; nothing is started")
	fs.StringVar(&s.MasterSet, "master-set", s.MasterSet, "replicated: the name the Sentinels monitor the master by (local default: "+DefaultMasterSet+")")
	fs.IntVar(&s.WaitReplicas, "wait-replicas", s.WaitReplicas, "replicated: WAIT for this many replicas after the SETs (0: no WAIT); fewer acknowledgements fail the acquire (few acks)")
	dur(&s.WaitTimeout, "wait-timeout", "replicated: WAIT's timeout (0: the per-master --timeout)")
	dur(&s.DownAfter, "down-after", "replicated, local: Sentinel's down-after-milliseconds (how long a silent master is waited for)")
	dur(&s.FailoverTimeout, "failover-timeout", "replicated, local: Sentinel's failover-timeout")
	fs.IntVar(&s.MinReplicasToWrite, "min-replicas-to-write", s.MinReplicasToWrite, "replicated, local: min-replicas-to-write on the master and replicas (0: off)")
	servers := &addrsFlag{m: &s.Servers}
	fs.Var(servers, "servers", "any lock service's external servers, as it takes them (comma-separated); nothing is started")
	for _, n := range serverTopologies() {
		ss := topologyNamed(n).ServersSetting()
		if ss.One {
			fs.Var(oneServerFlag{&s.Servers}, FlagName(ss.Name), ss.Usage)
			continue
		}
		fs.Var(servers, FlagName(ss.Name), ss.Usage)
	}
	dur(&s.MemberLatency, "member-latency", roleTopologies()+", local members: delay every message between members by this much (whole ms; proxies on the members' peer links)")
	fs.IntSliceVar(&s.ReplicaPriority, "replica-priority", s.ReplicaPriority, "replicated, local: replica-priority per replica, in order (Sentinel promotes the lowest non-zero; 0 never)")
}

// faultUsage is how a setting reads in a fault scenario, where the words
// written for run and sweep would mislead.
var faultUsage = map[string]string{
	"persistence": "none, aof-no, aof-everysec, aof-always",
	"local":       "local lock masters to start (--masters N, its old name, is still accepted)",
	"workers":     "workers per client",
	"keys":        "lock keys (one protected counter each)",
	"hold":        "mean time between reading a counter and writing it back, inside the lock",
	"duration":    "length of each cell",
	"seed":        "random seed (0: from the clock)",
}

// localFlag is --local: an int that remembers it was given.
type localFlag struct{ s *Settings }

func (f localFlag) String() string { return strconv.Itoa(f.s.Local) }
func (f localFlag) Type() string   { return "int" }
func (f localFlag) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return errors.New("not a whole number")
	}
	f.s.Local = n
	return nil
}

// oldMastersFlag is --masters N, the old name of --local N in fault
// scenarios. As masters are addresses in run and sweep, an address here is
// told what a fault scenario takes.
type oldMastersFlag struct{ s *Settings }

func (f oldMastersFlag) String() string { return strconv.Itoa(f.s.Local) }
func (f oldMastersFlag) Type() string   { return "int" }
func (f oldMastersFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("chaos starts its own masters (it crashes and restarts them); give how many with --local N (1..15), of which --masters N is the old name")
	}
	f.s.Local = n
	f.s.MarkGiven("local")
	return nil
}

// ApplyChanged copies the flags set on the command line (fs, bound by
// BindFlags) onto dst: command-line flags override a config file.
func ApplyChanged(fs *pflag.FlagSet, dst *Settings) error {
	return ApplyChangedWith(fs, func(target *pflag.FlagSet) { BindFlags(target, dst) })
}

// ApplyChangedWith copies the flags set on fs onto the settings that bind
// registers on a fresh flag set (by flag name; flags bind does not know are
// skipped): a command binds the flags it registered (BindFaultFlags).
func ApplyChangedWith(fs *pflag.FlagSet, bind func(target *pflag.FlagSet)) error {
	target := pflag.NewFlagSet("override", pflag.ContinueOnError)
	bind(target)
	var err error
	fs.Visit(func(f *pflag.Flag) {
		tf := target.Lookup(f.Name)
		if tf == nil || err != nil {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			err = tf.Value.(pflag.SliceValue).Replace(sv.GetSlice())
			return
		}
		err = tf.Value.Set(f.Value.String())
	})
	return err
}

// FlagName turns a YAML name into its flag name.
func FlagName(yamlName string) string { return strings.ReplaceAll(yamlName, "_", "-") }

// topologyUsage lists the registered topologies, each with what it
// locks with.
func topologyUsage() string {
	var out []string
	for _, n := range TopologyNames() {
		out = append(out, n+" ("+topologyNamed(n).About()+")")
	}
	return "what the lock runs on: " + strings.Join(out, ", ")
}

// oneServerFlag is a service's one server, as a URL: taken whole.
type oneServerFlag struct{ m *[]string }

func (f oneServerFlag) String() string {
	if f.m == nil || len(*f.m) == 0 {
		return ""
	}
	return redact.URL((*f.m)[0])
}
func (f oneServerFlag) Type() string { return "string" }
func (f oneServerFlag) Set(v string) error {
	*f.m = []string{v}
	return nil
}
