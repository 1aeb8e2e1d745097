package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"lockbench/drivers/redsyncdriver"
	"lockbench/engine"
	"lockbench/localmasters"
	"lockbench/report"
	"lockbench/workloads"
)

// runSettings is every effective setting of a run, as written in "config".
type runSettings struct {
	Masters      []string `json:"masters"`
	Local        int      `json:"local"`
	Persistence  string   `json:"persistence"`
	Embedded     bool     `json:"embedded_masters"`
	RedisVersion string   `json:"redis_server_version,omitempty"`
	Mode         string   `json:"mode"`
	Wait         string   `json:"wait"`
	Workers      int      `json:"workers"`
	Duration     string   `json:"duration"`
	Warmup       string   `json:"warmup"`
	Keys         uint64   `json:"keys"`
	Distribution string   `json:"distribution"`
	KeyPrefix    string   `json:"key_prefix"`
	TTL          string   `json:"ttl"`
	Hold         string   `json:"hold"`
	Timeout      string   `json:"timeout"`
	DriftFactor  float64  `json:"drift_factor"`
	Retries      int      `json:"retries"`
	RetryMin     string   `json:"retry_delay_min"`
	RetryMax     string   `json:"retry_delay_max"`
	Batch        int      `json:"batch"`
	Dispatchers  int      `json:"dispatchers"`
	Quorum       int      `json:"quorum"`
	Seed         uint64   `json:"seed"`
	Driver       string   `json:"driver"`
	Version      string   `json:"lockbench_version"`
}

type runFlags struct {
	masters     []string
	local       int
	persistence string
	embedded    string
	mode        string
	wait        string
	workers     int
	duration    time.Duration
	warmup      time.Duration
	keys        uint64
	dist        string
	keyPrefix   string
	ttl         time.Duration
	hold        time.Duration
	timeout     time.Duration
	drift       float64
	retries     int
	retryMin    time.Duration
	retryMax    time.Duration
	batch       int
	dispatchers int
	seed        uint64
	driver      string
	json        bool
	out         string
}

func runFlagSet(f *runFlags) *pflag.FlagSet {
	def := engine.DefaultConfig()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.StringSliceVar(&f.masters, "masters", nil, "masters as host:port, redis://[user:pass@]host:port or rediss://… (comma-separated); default: start --local masters")
	fs.IntVar(&f.local, "local", 5, "start this many local redis-server masters on 127.0.0.1 (when --masters is not given)")
	fs.StringVar(&f.persistence, "persistence", "none", "local masters' persistence: none, aof-no, aof-everysec, aof-always")
	fs.StringVar(&f.embedded, "embedded", "auto", "embedded in-process masters when redis-server is missing: auto, never, always")
	fs.StringVar(&f.mode, "mode", string(def.Mode), "acquisition: sequential (master after master) or multiplexed (all at once)")
	fs.StringVar(&f.wait, "wait", string(def.Wait), "wait for: all masters, or quorum (stop once the outcome is decided)")
	fs.IntVar(&f.workers, "workers", 16, "concurrent workers, each holding at most one lock (closed loop)")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "measured time")
	fs.DurationVar(&f.warmup, "warmup", 2*time.Second, "unmeasured time before the measured window")
	fs.Uint64Var(&f.keys, "keys", 100_000, "number of distinct lock keys")
	fs.StringVar(&f.dist, "distribution", "uniform", "key choice: uniform")
	fs.StringVar(&f.keyPrefix, "key-prefix", "", "key prefix (default lockbench:RUNID:)")
	fs.DurationVar(&f.ttl, "ttl", def.TTL, "lock time to live")
	fs.DurationVar(&f.hold, "hold", 0, "how long a worker holds each lock")
	fs.DurationVar(&f.timeout, "timeout", def.Timeout, "per-master timeout of one command (must be below --ttl)")
	fs.Float64Var(&f.drift, "drift-factor", def.DriftFactor, "clock drift allowance as a share of the TTL (plus 2ms)")
	fs.IntVar(&f.retries, "retries", def.Retries, "extra acquire attempts after a failure")
	fs.DurationVar(&f.retryMin, "retry-delay-min", def.RetryMin, "random retry delay, lower bound")
	fs.DurationVar(&f.retryMax, "retry-delay-max", def.RetryMax, "random retry delay, upper bound")
	fs.IntVar(&f.batch, "batch", def.MaxBatch, "most commands per pipelined write to one master")
	fs.IntVar(&f.dispatchers, "dispatchers", def.Dispatchers, "pipelined batches in flight per master")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed for key choice (0: random)")
	fs.StringVar(&f.driver, "driver", "lockbench", "lock client: lockbench (this engine) or redsync (go-redsync/redsync v4 on go-redis v9)")
	fs.BoolVar(&f.json, "json", false, "print exactly one JSON object on stdout")
	fs.StringVar(&f.out, "out", "", "also write the JSON result to this file")
	return fs
}

func cmdRun(args []string) int {
	var f runFlags
	fs := runFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(os.Stderr, "lockbench run:", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "lockbench run: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if fs.Changed("masters") && fs.Changed("local") {
		fmt.Fprintln(os.Stderr, "lockbench run: masters: give either --masters or --local, not both")
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runCell(ctx, f, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench run:", err)
		return exitCode(err)
	}
	if f.out != "" {
		if err := report.WriteFileAtomic(f.out, func(w io.Writer) error { return report.WriteJSON(w, res) }); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench run:", err)
			return exitFailure
		}
	}
	if f.json {
		if err := report.WriteJSON(os.Stdout, res); err != nil {
			return exitFailure
		}
	} else {
		printRun(os.Stdout, res)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "WARNING:", w)
	}
	if res.Interrupted {
		return exitInterrupted
	}
	return exitOK
}

// runCell checks every input, prepares masters, runs and returns the result.
// Bad input is a usageError and nothing has been started.
func runCell(ctx context.Context, f runFlags, log io.Writer) (*report.Run, error) {
	cfg := engine.DefaultConfig()
	var err error
	if cfg.Mode, err = engine.ParseMode(f.mode); err != nil {
		return nil, usageError{err}
	}
	if cfg.Wait, err = engine.ParseWait(f.wait); err != nil {
		return nil, usageError{err}
	}
	cfg.TTL, cfg.Timeout, cfg.DriftFactor = f.ttl, f.timeout, f.drift
	cfg.Retries, cfg.RetryMin, cfg.RetryMax = f.retries, f.retryMin, f.retryMax
	cfg.MaxBatch, cfg.Dispatchers = f.batch, f.dispatchers
	if f.driver != "lockbench" && f.driver != "redsync" {
		return nil, usageError{fmt.Errorf("driver: %q is not accepted; use lockbench or redsync", f.driver)}
	}
	if f.driver == "redsync" && cfg.Mode != engine.Multiplexed {
		return nil, usageError{fmt.Errorf("mode: %q is not available with driver redsync; redsync acquires on all masters at once (multiplexed)", cfg.Mode)}
	}
	persist, err := localmasters.ParsePersistence(f.persistence)
	if err != nil {
		return nil, usageError{err}
	}
	chooser, err := workloads.NewChooser(f.dist, f.keys)
	if err != nil {
		return nil, usageError{err}
	}
	runID := newRunID()
	prefix := f.keyPrefix
	if prefix == "" {
		prefix = "lockbench:" + runID + ":"
	}
	seed := f.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rc := workloads.RunConfig{Workers: f.workers, Duration: f.duration, Warmup: f.warmup,
		Keys: workloads.Keys{Prefix: prefix, Count: f.keys}, Chooser: chooser, Hold: f.hold, Seed: seed}
	if err := rc.Validate(); err != nil {
		return nil, usageError{err}
	}
	local := len(f.masters) == 0
	if local {
		if f.local < 1 {
			return nil, usageError{fmt.Errorf("local: %d is not accepted; use 1 or more masters", f.local)}
		}
		if f.embedded != "auto" && f.embedded != "never" && f.embedded != "always" {
			return nil, usageError{fmt.Errorf("embedded: %q is not accepted; use auto, never or always", f.embedded)}
		}
		_, haveRedis := localmasters.RedisServerPath()
		embedded := f.embedded == "always" || (f.embedded == "auto" && !haveRedis)
		if embedded && persist != localmasters.PersistNone {
			return nil, usageError{fmt.Errorf("persistence: %q needs real redis-server masters; embedded masters (redis-server not found) support only none", persist)}
		}
		if f.embedded == "never" && !haveRedis {
			return nil, fmt.Errorf("redis-server: not found in PATH and --embedded never; install it (apt-get install redis-server)")
		}
		cfg.Masters = make([]string, f.local) // placeholders, validated below
		for i := range cfg.Masters {
			cfg.Masters[i] = fmt.Sprintf("127.0.0.1:%d", i+1)
		}
	} else {
		if f.persistence != "none" {
			return nil, usageError{fmt.Errorf("persistence: applies to --local masters only; configure external masters yourself")}
		}
		for _, m := range f.masters {
			if _, _, err := engine.ParseMaster(m); err != nil {
				return nil, usageError{err}
			}
		}
		cfg.Masters = f.masters
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err}
	}

	settings := runSettings{Local: f.local, Persistence: string(persist), Mode: string(cfg.Mode), Wait: string(cfg.Wait),
		Workers: f.workers, Duration: f.duration.String(), Warmup: f.warmup.String(), Keys: f.keys,
		Distribution: f.dist, KeyPrefix: prefix, TTL: cfg.TTL.String(), Hold: f.hold.String(),
		Timeout: cfg.Timeout.String(), DriftFactor: cfg.DriftFactor, Retries: cfg.Retries,
		RetryMin: cfg.RetryMin.String(), RetryMax: cfg.RetryMax.String(), Batch: cfg.MaxBatch,
		Dispatchers: cfg.Dispatchers, Driver: f.driver, Quorum: engine.Quorum(len(cfg.Masters)), Seed: seed, Version: version}

	if local {
		set, err := localmasters.Start(ctx, localmasters.Options{N: f.local, Persistence: persist, Embedded: f.embedded, Log: log})
		if err != nil {
			return nil, err
		}
		defer set.Stop()
		cfg.Masters = set.Addrs()
		settings.Embedded = set.Embedded()
		settings.RedisVersion = set.Version()
	} else {
		settings.Local = 0
	}
	for _, m := range cfg.Masters {
		settings.Masters = append(settings.Masters, engine.RedactURL(m))
	}

	eng, err := engine.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	// The floor to compare acquires with: plain SET round trips, one master
	// at a time, measured in this run on these masters.
	rtts, err := eng.BaselineRTT(ctx, prefix+"rtt", baselineSamples)
	if err != nil {
		return nil, err
	}
	var locker workloads.Locker = eng
	if f.driver == "redsync" {
		rs, err := redsyncdriver.New(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer rs.Close()
		locker = rs
	}
	started := time.Now()
	st, err := workloads.Run(ctx, locker, rc)
	if err != nil {
		return nil, err
	}
	res := st.Result(locker, settings, started)
	res.BaselineRTT = map[string]report.Latency{}
	for i, addr := range eng.Addrs() {
		h := report.NewHistogram()
		for _, d := range rtts[i] {
			report.RecordDuration(h, d)
		}
		res.BaselineRTT[addr] = report.Summarize(h)
	}
	return &res, nil
}

// baselineSamples SET round trips per master before the load starts.
const baselineSamples = 500

func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// printRun is the human summary: a short table.
func printRun(w io.Writer, r *report.Run) {
	s := r.Config.(runSettings)
	fmt.Fprintf(w, "lockbench run: %d masters (%s), mode=%s wait=%s workers=%d keys=%d ttl=%s hold=%s, %.1fs measured%s\n",
		len(s.Masters), s.Persistence, s.Mode, s.Wait, s.Workers, s.Keys, s.TTL, s.Hold, r.MeasuredSeconds,
		map[bool]string{true: " (INTERRUPTED)", false: ""}[r.Interrupted])
	fmt.Fprintf(w, "throughput: %.0f cycles/s, %.0f acquires/s\n\n", r.Throughput.CyclesPerSec, r.Throughput.AcquiresPerSec)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency µs\tcount\tp50\tp90\tp99\tp99.9\tmax\tmean\t")
	for _, row := range []struct {
		name string
		l    report.Latency
	}{{"acquire ok", r.AcquireLatency}, {"acquire failed", r.AcquireFailedLatency}, {"release", r.ReleaseLatency}} {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", row.name, row.l.Count,
			row.l.P50, row.l.P90, row.l.P99, row.l.P999, row.l.Max, row.l.Mean)
	}
	tw.Flush()
	o := r.Outcomes
	fmt.Fprintf(w, "\noutcomes: %d acquired, %d not acquired, %d errors\n", o.Acquired, o.NotAcquired, o.Errors)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "master\tok\ttaken\ttimeout\terror\tlate\t")
	for _, m := range s.Masters {
		pm := o.PerMaster[m]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", m, pm.OK, pm.Taken, pm.Timeout, pm.Error, pm.Late)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nsafety: %d violations, max %d concurrent holders of one key\n", r.Safety.Violations, r.Safety.MaxConcurrentHolder)
	fmt.Fprintf(w, "client: %.2f CPU s, %.1f CPU µs/cycle, %.0f%% of %d cores\n",
		r.Client.CPUSeconds, r.Client.CPUMicrosCycle, 100*r.Client.CPUShare, r.Client.Cores)
}
