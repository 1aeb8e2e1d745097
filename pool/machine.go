package pool

import (
	"net"
	"slices"
	"strings"
	"time"

	"lockbench/results"

	"github.com/prometheus/procfs"
)

// machineProbe reads where this machine's CPU goes (/proc) at the measured
// window's start and end: the whole machine, lockbench, and every master
// that runs here.
type machineProbe struct {
	fs   procfs.FS
	pids []int // per master: its process here, 0 when not found
	here []bool
	// fallback is each master's CPU from INFO over the window, for a
	// master that runs here but whose process is not visible (another
	// pid namespace); set after the run.
	fallback   []time.Duration
	clientCPUs []int
	localCPUs  []int
	// proxySeconds is the --net-latency proxy's CPU in the window, when
	// proxyKnown.
	proxySeconds float64
	proxyKnown   bool
	// replicas and monitors are a local replicated set's other servers:
	// their CPU is the topology's too (servers' share, Servers).
	replicas, monitors []int
	// trees: a server's CPU is its process's and its descendants' (a
	// postmaster's backends do the work).
	trees bool
	// adapter is an external client's adapter process (0: none), read
	// with lockbench's own: the library's work is the client's.
	adapter int

	start, end cpuSample
}

type cpuSample struct {
	at                 time.Time
	cores              int
	total, busy, steal float64 // CPU seconds summed over all cores
	client             float64 // lockbench's process
	adapter            float64 // its adapter's (-1: none or not read)
	masters            []float64
	replicas           []float64 // -1: not read
	monitors           []float64
}

// newMachineProbe is nil when /proc cannot be read (not Linux). addrs are
// the servers as dialled; localPids the processes of local servers;
// selfPids what each server says its process is, a process named
// procName.
func newMachineProbe(addrs []string, localPids, selfPids []int, procName string) *machineProbe {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil
	}
	if _, err := fs.Stat(); err != nil {
		return nil
	}
	p := &machineProbe{fs: fs}
	p.pids, p.here = mastersHere(fs, addrs, localPids, selfPids, procName)
	return p
}

// sample reads /proc now; a value it cannot read stays 0 (masters: -1).
func (p *machineProbe) sample() cpuSample {
	s := cpuSample{at: time.Now(), masters: make([]float64, len(p.pids))}
	if st, err := p.fs.Stat(); err == nil {
		c := st.CPUTotal
		s.cores = len(st.CPU)
		s.busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
		s.steal = c.Steal
		s.total = s.busy + s.steal + c.Idle + c.Iowait
	}
	s.client = procCPU(p.fs, 0)
	s.adapter = -1
	if p.adapter > 0 {
		s.adapter = procCPU(p.fs, p.adapter)
	}
	s.replicas, s.monitors = p.procCPUs(p.replicas), p.procCPUs(p.monitors)
	for i, pid := range p.pids {
		s.masters[i] = -1
		switch {
		case pid > 0 && p.trees:
			s.masters[i] = treeCPU(p.fs, pid)
		case pid > 0:
			s.masters[i] = procCPU(p.fs, pid)
		}
	}
	return s
}

// procCPUs are the processes' CPU seconds (-1: not read).
func (p *machineProbe) procCPUs(pids []int) []float64 {
	out := make([]float64, len(pids))
	for i, pid := range pids {
		out[i] = -1 // a process not running (pid 0) is not this one
		if pid > 0 {
			out[i] = procCPU(p.fs, pid)
		}
	}
	return out
}

// used is the CPU seconds the processes read at both samples used between
// them.
func used(a, b []float64) float64 {
	sum := 0.0
	for i := range min(len(a), len(b)) {
		if a[i] >= 0 && b[i] >= 0 {
			sum += b[i] - a[i]
		}
	}
	return sum
}

// topologyCPU adds the replicas' and monitors' CPU in the window to the
// servers' figures, and every server's per cycle.
func (p *machineProbe) topologyCPU(sv *results.Servers, cycles int64) {
	sv.ReplicaCPUSeconds = used(p.start.replicas, p.end.replicas)
	sv.MonitorCPUSeconds = used(p.start.monitors, p.end.monitors)
	if cycles > 0 {
		sv.TopologyCPUMicrosCycle = (sv.CPUSeconds + sv.ReplicaCPUSeconds + sv.MonitorCPUSeconds) * 1e6 / float64(cycles)
	}
}

// procCPU is a process's user+system CPU seconds (pid 0: this process),
// -1 when it cannot be read.
func procCPU(fs procfs.FS, pid int) float64 {
	var proc procfs.Proc
	var err error
	if pid == 0 {
		proc, err = fs.Self()
	} else {
		proc, err = fs.Proc(pid)
	}
	if err != nil {
		return -1
	}
	st, err := proc.Stat()
	if err != nil {
		return -1
	}
	return st.CPUTime()
}

// split is the window's CPU split; nil without two good readings.
func (p *machineProbe) split(addrs []string) *results.CPUSplit {
	a, b := p.start, p.end
	total := b.total - a.total
	wall := b.at.Sub(a.at).Seconds()
	if total <= 0 || wall <= 0 || b.cores == 0 {
		return nil
	}
	m := &results.CPUSplit{
		Cores: b.cores, BusyShare: (b.busy - a.busy) / total, StealShare: (b.steal - a.steal) / total,
		MasterCoreShare: map[string]float64{}, ClientCPUs: p.clientCPUs, LocalCPUs: p.localCPUs,
	}
	if a.client >= 0 && b.client >= 0 {
		m.ClientShare = (b.client - a.client) / total
	}
	if a.adapter >= 0 && b.adapter >= 0 {
		as := (b.adapter - a.adapter) / total
		m.ClientShare += as
		m.AdapterShare = &as
	}
	servers := 0.0
	for i, addr := range addrs {
		if !p.here[i] {
			// Elsewhere: not this machine's CPU, but its core share
			// (INFO) still tells whether that master was saturated.
			if i < len(p.fallback) && p.fallback[i] >= 0 {
				m.MasterCoreShare[addr] = p.fallback[i].Seconds() / wall
			}
			continue
		}
		m.MastersShareMachine = true
		cpu := -1.0
		if a.masters[i] >= 0 && b.masters[i] >= 0 {
			cpu = b.masters[i] - a.masters[i]
		} else if i < len(p.fallback) && p.fallback[i] >= 0 {
			cpu = p.fallback[i].Seconds()
		}
		if cpu >= 0 {
			servers += cpu
			m.MasterCoreShare[addr] = cpu / wall
		}
	}
	servers += used(a.replicas, b.replicas) + used(a.monitors, b.monitors)
	m.ServersShare = servers / total
	m.OtherShare = max(0, m.BusyShare-m.ClientShare-m.ServersShare)
	if p.proxyKnown {
		ps := p.proxySeconds / total
		m.ProxyShare = &ps
	}
	return m
}

// mastersHere finds, per server, whether it runs on this machine and its
// process: local servers by their pid, given ones on a loopback address
// by the pid the server names itself when /proc shows a process named
// procName on that port there.
func mastersHere(fs procfs.FS, addrs []string, localPids, selfPids []int, procName string) (pids []int, here []bool) {
	pids, here = make([]int, len(addrs)), make([]bool, len(addrs))
	for i, addr := range addrs {
		if i < len(localPids) && localPids[i] > 0 {
			pids[i], here[i] = localPids[i], true
			continue
		}
		host, port, ok := hostPort(addr)
		if !ok || !isLoopback(host) {
			continue
		}
		here[i] = true
		if i < len(selfPids) && isServerOnPort(fs, selfPids[i], procName, port) {
			pids[i] = selfPids[i]
		}
	}
	return pids, here
}

// hostPort takes host and port out of host:port or a URL.
func hostPort(addr string) (string, string, bool) {
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		addr = rest
		if at := strings.LastIndex(addr, "@"); at >= 0 {
			addr = addr[at+1:]
		}
		addr, _, _ = strings.Cut(addr, "/")
	}
	h, p, err := net.SplitHostPort(addr)
	return h, p, err == nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isServerOnPort: pid is a process named name whose title names the
// port, so a pid from another pid namespace is not taken for a process
// here.
func isServerOnPort(fs procfs.FS, pid int, name, port string) bool {
	if pid <= 0 || name == "" {
		return false
	}
	proc, err := fs.Proc(pid)
	if err != nil {
		return false
	}
	comm, err := proc.Comm()
	if err != nil || !strings.HasPrefix(comm, name) {
		return false
	}
	args, err := proc.CmdLine()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(args, func(a string) bool {
		return strings.HasSuffix(a, ":"+port) || strings.Contains(a, ":"+port+" ") || a == port
	})
}

// ProcessCPU reads each process's CPU time from /proc (-1: not read),
// for servers that report none themselves: an etcd member's, or with
// tree a postmaster's with its backends'.
func ProcessCPU(pids []int, tree bool) []time.Duration {
	out := make([]time.Duration, len(pids))
	fs, err := procfs.NewDefaultFS()
	read := procCPU
	if tree {
		read = treeCPU
	}
	for i, pid := range pids {
		out[i] = -1
		if err == nil && pid > 0 {
			if s := read(fs, pid); s >= 0 {
				out[i] = time.Duration(s * float64(time.Second))
			}
		}
	}
	return out
}

// treeCPU is the CPU seconds of pid and every process descended from it
// (-1: pid not read).
func treeCPU(fs procfs.FS, pid int) float64 {
	total := procCPU(fs, pid)
	if total < 0 {
		return -1
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return total
	}
	parent := map[int]int{}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			parent[p.PID] = st.PPID
		}
	}
	for child := range parent {
		if child != pid && descends(parent, child, pid) {
			if c := procCPU(fs, child); c >= 0 {
				total += c
			}
		}
	}
	return total
}

// descends says child's line of parents reaches root.
func descends(parent map[int]int, child, root int) bool {
	for p, n := parent[child], 0; p > 1 && n < 64; p, n = parent[p], n+1 {
		if p == root {
			return true
		}
	}
	return false
}
