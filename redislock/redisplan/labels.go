package redisplan

import (
	"fmt"
	"strconv"

	"lockbench/plan"
	"lockbench/redislock/engine"
	"lockbench/results"
)

// Labels name a cell of Redis' on report pages (plan.Labeler): Redlock by
// its mode, a replicated set by its servers and WAIT; the single master is
// the price table's reference. rueidislock waits its own way (its client
// retries when the server says a key changed).
func (r topology) Labels(rec results.Settings, servers int) plan.Labels {
	l := r.labels(rec, servers)
	if rec.Driver == RueidislockDriver {
		l.Wait = "notify, rueidislock's own"
	}
	return l
}

func (r topology) labels(rec results.Settings, servers int) plan.Labels {
	switch r.t {
	case engine.Redlock:
		return plan.Labels{Topology: fmt.Sprintf("%s (%s)", r.t, rec.Mode), Short: fmt.Sprintf("%s N=%d\n%s", r.t, servers, rec.Mode), Mode: rec.Mode}
	case engine.Single:
		return plan.Labels{Reference: true}
	case engine.Replicated:
		return replicatedLabels(rec)
	case engine.Cluster:
		return clusterLabels(rec, servers)
	}
	return plan.Labels{}
}

// replicatedLabels: a local set by its replicas and Sentinels, an external
// one (no replicas recorded) as such.
func replicatedLabels(rec results.Settings) plan.Labels {
	l := plan.Labels{Topology: "replicated, WAIT " + strconv.Itoa(rec.WaitReplicas),
		Servers: "1 master + replicas (external)", Short: fmt.Sprintf("replicated\nWAIT %d", rec.WaitReplicas)}
	if rec.Replicas > 0 {
		l.Servers = fmt.Sprintf("1 master + %d replicas, %d Sentinels", rec.Replicas, rec.Sentinels)
		l.Short = fmt.Sprintf("replicated R=%d\nWAIT %d", rec.Replicas, rec.WaitReplicas)
	}
	return l
}

// clusterLabels: a cluster by its shards (the masters) and WAIT.
func clusterLabels(rec results.Settings, servers int) plan.Labels {
	l := plan.Labels{Topology: "cluster", Servers: fmt.Sprintf("%d shards (master + replicas each)", servers), Short: fmt.Sprintf("cluster\n%d shards", servers)}
	if rec.WaitReplicas > 0 {
		l.Topology += ", WAIT " + strconv.Itoa(rec.WaitReplicas)
		l.Short += fmt.Sprintf(", WAIT %d", rec.WaitReplicas)
	}
	return l
}
