package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/redis/rueidis"

	"lockbench/internal/affinity"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// BenchmarkEngineVsReference measures lockbench's engine against the
// pipelining limit on the same 5 local masters, in one run: a minimal
// client of 16 goroutines, each taking 32 random keys per round with one
// DoMulti of 32 SET NX PX per master (all masters at once), then one
// DoMulti of 32 release scripts per master. Phases alternate (reference,
// engine, reference, …) so drift on the machine falls on both; the figures
// are medians of the phases. Run it with -benchtime 1x:
//
//	go test ./engine -run '^$' -bench EngineVsReference -benchtime 1x
//
// The last case, servers-apart, runs 512 workers with the masters pinned
// to the last CPU and this process to the others: the servers then have a
// core of their own and set the pace, and the ratio says whether the
// engine keeps up with them (on the shared cores it says how much CPU the
// engine takes from them).
func BenchmarkEngineVsReference(b *testing.B) {
	set := redistest.StartMasters(b, 5, localmasters.PersistNone)
	for _, workers := range []int{1, 16, 256, 512} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			for range b.N {
				compareOnce(b, set, workers)
			}
		})
	}
	b.Run("workers=512/servers-apart", func(b *testing.B) {
		serversApart(b, set)
		for range b.N {
			compareOnce(b, set, 512)
		}
	})
}

// serversApart pins the masters to the last CPU and this process to the
// others until the benchmark ends (also when it fails half-way), then
// gives each back the CPUs it had.
func serversApart(b *testing.B, set *localmasters.Set) {
	all, err := affinity.AllowedCPUs(0)
	if err != nil || len(all) < 2 {
		b.Skipf("servers apart needs 2 CPUs to pin to (%v, %v)", all, err)
	}
	masters := set.Masters()
	had := make([][]int, len(masters))
	for i, m := range masters {
		if had[i], err = affinity.AllowedCPUs(m.Pid()); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		for i, m := range masters {
			_ = affinity.PinProcess(m.Pid(), had[i])
		}
		_ = affinity.PinProcess(0, all)
	})
	last := all[len(all)-1:]
	for _, m := range masters {
		if err := affinity.PinProcess(m.Pid(), last); err != nil {
			b.Fatal(err)
		}
	}
	if err := affinity.PinProcess(0, all[:len(all)-1]); err != nil {
		b.Fatal(err)
	}
}

const (
	refKeys   = 1_000_000
	refPhase  = 2 * time.Second
	refRounds = 3
)

type phase struct {
	cyclesPerSec, cpuMicrosCycle, allocsCycle float64
	// write and read system calls per cycle (of this process: client only)
	writesCycle, readsCycle float64
	// the masters' CPU per cycle, and the machine's idle share of the phase:
	// the two cores are shared, so a client that is cheaper per cycle but
	// makes the servers pay more (smaller batches) is not faster.
	serverMicrosCycle, idle float64
	// serverWakesCycle counts the masters' voluntary context switches per
	// cycle: a server that ran out of input slept and was woken, which
	// costs its core a switch (the engine's traffic wakes them more often
	// than the reference's bursts).
	serverWakesCycle float64
}

func compareOnce(b *testing.B, set *localmasters.Set, workers int) {
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ref := newReference(b, set.Addrs())
	defer ref.close()
	var eng, lim []phase
	// One unmeasured second of each first: the first phase of a run is
	// slower for both (connections, servers' memory, the Go heap growing).
	warm(func(stop *atomic.Bool) int64 { return ref.run(stop) })
	warm(func(stop *atomic.Bool) int64 { return engineLoop(e, workers, stop) })
	b0, c0 := e.Batching()
	for range refRounds {
		lim = append(lim, measure(set, func(stop *atomic.Bool) int64 { return ref.run(stop) }))
		eng = append(eng, measure(set, func(stop *atomic.Bool) int64 { return engineLoop(e, workers, stop) }))
	}
	me, ml := median(eng), median(lim)
	b1, c1 := e.Batching()
	b.ReportMetric(float64(c1-c0)/float64(max(1, b1-b0)), "cmds/batch")
	b.ReportMetric(me.cyclesPerSec, "cycles/s")
	b.ReportMetric(ml.cyclesPerSec, "ref-cycles/s")
	b.ReportMetric(me.cyclesPerSec/ml.cyclesPerSec, "ratio")
	b.ReportMetric(me.cpuMicrosCycle, "client-µs/cycle")
	b.ReportMetric(ml.cpuMicrosCycle, "ref-client-µs/cycle")
	b.ReportMetric(me.allocsCycle, "allocs/cycle")
	b.ReportMetric(me.writesCycle, "writes/cycle")
	b.ReportMetric(ml.writesCycle, "ref-writes/cycle")
	b.ReportMetric(me.readsCycle, "reads/cycle")
	b.ReportMetric(ml.readsCycle, "ref-reads/cycle")
	b.ReportMetric(me.serverMicrosCycle, "servers-µs/cycle")
	b.ReportMetric(ml.serverMicrosCycle, "ref-servers-µs/cycle")
	b.ReportMetric(me.serverWakesCycle, "servers-wakes/cycle")
	b.ReportMetric(ml.serverWakesCycle, "ref-servers-wakes/cycle")
	b.ReportMetric(medianOf(eng, phase.clientPerServer), "client/servers")
	b.ReportMetric(medianOf(lim, phase.clientPerServer), "ref-client/servers")
	b.ReportMetric(me.idle, "idle")
	b.ReportMetric(ml.idle, "ref-idle")
	b.Logf("workers=%d engine %s reference %s", workers, fmtPhases(eng), fmtPhases(lim))
}

func fmtPhases(ps []phase) string {
	s := ""
	for _, p := range ps {
		s += fmt.Sprintf(" %.0f/s %.1fµs %.1fallocs %.3fw %.3fr servers %.1fµs %.3fwakes idle %.2f client/servers %.3f",
			p.cyclesPerSec, p.cpuMicrosCycle, p.allocsCycle, p.writesCycle, p.readsCycle, p.serverMicrosCycle,
			p.serverWakesCycle, p.idle, p.clientPerServer())
	}
	return s
}

// measure runs loop for one phase and returns its rate, the process's CPU
// per cycle and the allocations per cycle.
func measure(set *localmasters.Set, loop func(stop *atomic.Bool) int64) phase {
	var stop atomic.Bool
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	s0, z0 := serversCPU(set), serversWakes(set)
	busy0, all0 := machineTicks()
	cpu0, t0 := processCPU(), time.Now()
	w0, r0 := syscallsIO()
	time.AfterFunc(refPhase, func() { stop.Store(true) })
	n := loop(&stop)
	secs := time.Since(t0).Seconds()
	cpu := processCPU() - cpu0
	w1, r1 := syscallsIO()
	busy1, all1 := machineTicks()
	s1, z1 := serversCPU(set), serversWakes(set)
	runtime.ReadMemStats(&m1)
	if n == 0 {
		return phase{}
	}
	per := func(d float64) float64 { return d / float64(n) }
	return phase{cyclesPerSec: float64(n) / secs, cpuMicrosCycle: per(float64(cpu.Microseconds())),
		allocsCycle: per(float64(m1.Mallocs - m0.Mallocs)), writesCycle: per(w1 - w0), readsCycle: per(r1 - r0),
		serverMicrosCycle: per((s1 - s0) * 1e6), idle: 1 - (busy1-busy0)/max(1, all1-all0),
		serverWakesCycle: per(z1 - z0)}
}

// clientPerServer is the client's CPU per unit of the servers': they do
// the same commands per cycle whatever the client, so it holds still when
// the machine's speed drifts between phases (0 when their CPU was not
// read: embedded masters).
func (p phase) clientPerServer() float64 {
	if p.serverMicrosCycle <= 0 {
		return 0
	}
	return p.cpuMicrosCycle / p.serverMicrosCycle
}

func warm(loop func(stop *atomic.Bool) int64) {
	var stop atomic.Bool
	time.AfterFunc(time.Second, func() { stop.Store(true) })
	loop(&stop)
}

// serversCPU is the masters' user+system CPU seconds.
func serversCPU(set *localmasters.Set) float64 {
	return sumServers(set, func(p procfs.Proc) (float64, error) {
		st, err := p.Stat()
		return st.CPUTime(), err
	})
}

// serversWakes is the masters' voluntary context switches.
func serversWakes(set *localmasters.Set) float64 {
	return sumServers(set, func(p procfs.Proc) (float64, error) {
		st, err := p.NewStatus()
		return float64(st.VoluntaryCtxtSwitches), err
	})
}

// sumServers adds f over the masters' processes; one that cannot be read
// (embedded masters have no pid) adds nothing.
func sumServers(set *localmasters.Set, f func(procfs.Proc) (float64, error)) float64 {
	total := 0.0
	for _, m := range set.Masters() {
		if p, err := procfs.NewProc(m.Pid()); err == nil {
			if v, err := f(p); err == nil {
				total += v
			}
		}
	}
	return total
}

// machineTicks is the busy and total CPU seconds of all CPUs; guest time
// is already in user and nice.
func machineTicks() (busy, all float64) {
	st, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0
	}
	s, err := st.Stat()
	if err != nil {
		return 0, 0
	}
	c := s.CPUTotal
	busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	return busy, busy + c.Idle + c.Iowait
}

// syscallsIO is this process's write and read system call counts (zero
// where procfs has none): how many commands share a write, and how many
// replies a read brings.
func syscallsIO() (writes, reads float64) {
	p, err := procfs.Self()
	if err != nil {
		return 0, 0
	}
	io, err := p.IO()
	if err != nil {
		return 0, 0
	}
	return float64(io.SyscW), float64(io.SyscR)
}

func median(ps []phase) phase {
	pick := func(f func(phase) float64) float64 { return medianOf(ps, f) }
	return phase{pick(func(p phase) float64 { return p.cyclesPerSec }),
		pick(func(p phase) float64 { return p.cpuMicrosCycle }),
		pick(func(p phase) float64 { return p.allocsCycle }),
		pick(func(p phase) float64 { return p.writesCycle }),
		pick(func(p phase) float64 { return p.readsCycle }),
		pick(func(p phase) float64 { return p.serverMicrosCycle }),
		pick(func(p phase) float64 { return p.idle }),
		pick(func(p phase) float64 { return p.serverWakesCycle })}
}

// medianOf is the median of f over the phases (of each phase's own value,
// not a value of the median phase).
func medianOf(ps []phase, f func(phase) float64) float64 {
	v := make([]float64, len(ps))
	for i, p := range ps {
		v[i] = f(p)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func engineLoop(e *engine.Engine, workers int, stop *atomic.Bool) int64 {
	var cycles atomic.Int64
	var wg sync.WaitGroup
	keys := benchKeys()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(0)
			for !stop.Load() {
				if lock, _ := e.Acquire(context.Background(), keys[rand.IntN(len(keys))]); lock != nil {
					e.Release(context.Background(), lock)
					n++
				}
			}
			cycles.Add(n)
		}()
	}
	wg.Wait()
	return cycles.Load()
}

var benchKeys = sync.OnceValue(func() []string {
	keys := make([]string, refKeys)
	for i := range keys {
		keys[i] = "ref:" + strconv.Itoa(i)
	}
	return keys
})

// reference is the pipelining limit: nothing but batched SETs and releases.
// Its lock values are unique tokens of the engine's format, one per key, as
// a lock's must be (a release must not delete another holder's value); a
// constant 8-byte value was measurably cheaper for the servers than the
// engine's 25-byte tokens (BENCHMARKS §2).
type reference struct {
	clients []rueidis.Client
	ttl     int64
	tokens  *engine.TokenSource
	sha     string
}

func newReference(b *testing.B, addrs []string) *reference {
	r := &reference{ttl: 10_000, tokens: engine.NewTokenSource()}
	for _, a := range addrs {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{a}, ForceSingleClient: true,
			DisableCache: true, AlwaysPipelining: true, PipelineMultiplex: -1, DisableRetry: true})
		if err != nil {
			b.Fatal(err)
		}
		r.clients = append(r.clients, c)
		if r.sha, err = c.Do(context.Background(), c.B().ScriptLoad().Script(release).Build()).ToString(); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

func (r *reference) close() {
	for _, c := range r.clients {
		c.Close()
	}
}

const (
	refWorkers = 16
	refBatch   = 32
	release    = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
)

func (r *reference) run(stop *atomic.Bool) int64 {
	var cycles atomic.Int64
	var wg sync.WaitGroup
	keys := benchKeys()
	for range refWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]string, refBatch)
			for !stop.Load() {
				for i := range batch {
					batch[i] = keys[rand.IntN(len(keys))]
				}
				cycles.Add(r.round(batch))
			}
		}()
	}
	wg.Wait()
	return cycles.Load()
}

// round acquires batch on every master at once, counts the keys won on a
// quorum, then releases the batch everywhere.
func (r *reference) round(batch []string) int64 {
	tokens := make([]string, len(batch))
	for i := range tokens {
		tokens[i] = r.tokens.Next()
	}
	ok := make([]int, len(batch))
	var mu sync.Mutex
	r.each(func(c rueidis.Client) []rueidis.Completed {
		cmds := make([]rueidis.Completed, len(batch))
		for i, k := range batch {
			cmds[i] = c.B().Set().Key(k).Value(tokens[i]).Nx().PxMilliseconds(r.ttl).Build()
		}
		return cmds
	}, func(res []rueidis.RedisResult) {
		mu.Lock()
		for i, x := range res {
			if x.Error() == nil {
				ok[i]++
			}
		}
		mu.Unlock()
	})
	r.each(func(c rueidis.Client) []rueidis.Completed {
		cmds := make([]rueidis.Completed, len(batch))
		for i, k := range batch {
			cmds[i] = c.B().Evalsha().Sha1(r.sha).Numkeys(1).Key(k).Arg(tokens[i]).Build()
		}
		return cmds
	}, func([]rueidis.RedisResult) {})
	won := int64(0)
	for _, n := range ok {
		if n >= engine.Quorum(len(r.clients)) {
			won++
		}
	}
	return won
}

func (r *reference) each(build func(rueidis.Client) []rueidis.Completed, done func([]rueidis.RedisResult)) {
	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done(c.DoMulti(context.Background(), build(c)...))
		}()
	}
	wg.Wait()
}
