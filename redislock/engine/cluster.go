package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// nodes are the link's servers: its master, or every node a cluster
// client knows (masters and replicas).
func (l *link) nodes() []rueidis.Client {
	if !l.cluster {
		return []rueidis.Client{l.client}
	}
	m := l.client.Nodes()
	addrs := make([]string, 0, len(m))
	for a := range m {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	out := make([]rueidis.Client, len(addrs))
	for i, a := range addrs {
		out[i] = m[a]
	}
	return out
}

// masters are the link's master, or the cluster's nodes that say they
// are masters now (ROLE): each shard's keys are on its master alone.
func (l *link) masters(ctx context.Context) ([]rueidis.Client, error) {
	if !l.cluster {
		return []rueidis.Client{l.client}, nil
	}
	var out []rueidis.Client
	for _, c := range l.nodes() {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		role, err := c.Do(cctx, c.B().Role().Build()).ToArray()
		cancel()
		if err != nil {
			continue // a node down (killed): its shard's master is another now
		}
		if len(role) > 0 {
			if r, _ := role[0].ToString(); r == "master" {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no node of the cluster answers as master")
	}
	return out, nil
}

// waitCommands are the WAITs to send after a batch's SETs, and for each
// SET the index of the one that covers it: one WAIT on a master's link;
// on a cluster one per slot the SETs touched, sent on that slot (the
// cluster client puts it on the same node's connection after its SETs,
// so it covers them: WAIT counts the replicas that have every earlier
// write of its connection).
func (l *link) waitCommands(live []*request) (waits []rueidis.Completed, of []int) {
	b := l.client.B()
	w := func() rueidis.Completed {
		return b.Wait().Numreplicas(l.wait.replicas).Timeout(l.wait.timeoutMs).Build()
	}
	of = make([]int, len(live))
	if !l.cluster {
		return []rueidis.Completed{w()}, of
	}
	bySlot := map[uint16]int{}
	for i, r := range live {
		s := r.call.cmd.Slot()
		j, ok := bySlot[s]
		if !ok {
			j = len(waits)
			bySlot[s] = j
			waits = append(waits, w().SetSlot(r.call.key))
		}
		of[i] = j
	}
	return waits, of
}

// clusterCleanup deletes, one by one through the cluster client (routed
// by slot: one script may not take keys of several slots), the keys
// whose value starts with one of tokenPrefixes.
func (l *link) clusterCleanup(ctx context.Context, keys, tokenPrefixes []string) (int, error) {
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = l.client.B().Eval().Script(cleanupScript).Numkeys(1).Key(k).Arg(tokenPrefixes...).Build()
	}
	n := 0
	for _, res := range l.client.DoMulti(ctx, cmds...) {
		d, err := res.AsInt64()
		if err != nil {
			return n, err
		}
		n += int(d)
	}
	return n, nil
}

// summed are INFO's fields a cluster's figure adds up over its masters
// (the rest are the first master's): its CPU, clients and commands.
var summed = []string{"used_cpu_sys", "used_cpu_user", "connected_clients", "total_commands_processed"}

// mergeInfo is the INFO texts of a cluster's masters as one server's: the
// summed fields and every command's calls and usec added up, the rest as
// the first says.
func mergeInfo(texts []string) string {
	if len(texts) == 1 {
		return texts[0]
	}
	var order []string
	vals := map[string]string{}
	for _, t := range texts {
		for name, v := range ParseInfo(t) {
			old, seen := vals[name]
			if !seen {
				order = append(order, name)
				vals[name] = v
				continue
			}
			switch {
			case strings.HasPrefix(name, "cmdstat_"):
				a, b := parseCommandStat(old), parseCommandStat(v)
				vals[name] = fmt.Sprintf("calls=%d,usec=%d", a.Calls+b.Calls, a.Usec+b.Usec)
			case isSummed(name):
				x, _ := strconv.ParseFloat(old, 64)
				y, _ := strconv.ParseFloat(v, 64)
				vals[name] = strconv.FormatFloat(x+y, 'f', -1, 64)
			}
		}
	}
	sort.Strings(order)
	var sb strings.Builder
	for _, n := range order {
		sb.WriteString(n + ":" + vals[n] + "\r\n")
	}
	return sb.String()
}

func isSummed(name string) bool {
	for _, s := range summed {
		if s == name {
			return true
		}
	}
	return false
}
