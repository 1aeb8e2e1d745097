package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"lockbench/internal/redact"
	"lockbench/results"
)

// Fault is one scheduled fault of a cell (plain data; package faults
// carries it out).
type Fault = results.Fault

// Metrics an expectation can name: the metric table's, the same as a
// threshold's.
var Metrics = results.MetricNames()

// Expectation is a claim a cell must show, such as violations >0: a rule
// of the cell's own scope, in the one grammar of thresholds.
type Expectation = results.Rule

// ParseExpectation reads expect:'s map form, a condition such as ">0",
// "0", ">=100000" or "<10ms" on a metric.
func ParseExpectation(metric, cond string) (Expectation, error) {
	return results.ParseCondition(results.ScopeExpect, metric, cond)
}

// parseExpectations reads an expect: mapping, in name order; where
// prefixes errors ("cells[1].").
func parseExpectations(ex map[string]string, where string) ([]Expectation, error) {
	var out []Expectation
	for _, k := range sortedKeys(ex) {
		e, err := ParseExpectation(k, ex[k])
		if err != nil {
			return nil, fmt.Errorf("%s%w", where, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// ParseExpectFlag reads an --expect value such as "violations>0".
func ParseExpectFlag(s string) (Expectation, error) {
	return results.ParseRule(results.ScopeExpect, s)
}

// faultYAML is one fault as written in a scenario or a --fault flag. Its
// targets are indices into the cell's masters and clients (from 0).
type faultYAML struct {
	At Duration `yaml:"at"`
	// AtUntil: the moment is drawn per run in at..at_until.
	AtUntil     Duration `yaml:"at_until"`
	Kind        string   `yaml:"kind"`
	MasterIndex []int    `yaml:"master_index"`
	ClientIndex []int    `yaml:"client_index"`
	// A replicated set's replicas and Sentinels, by index from 0.
	ReplicaIndex  []int    `yaml:"replica_index"`
	SentinelIndex []int    `yaml:"sentinel_index"`
	For           Duration `yaml:"for"`
	Restart       string   `yaml:"restart"`
	Latency       Duration `yaml:"latency"`
	Jitter        Duration `yaml:"jitter"`
	By            Duration `yaml:"by"`
	// Role: crash or pause a consensus member (etcd, ZooKeeper) by its
	// role when the fault fires.
	Role string `yaml:"role"`
	// Link: partition, client (clients from servers, the default) or
	// members (a consensus member from the other members).
	Link string `yaml:"link"`
}

// oldFaultFields are the names fault targets had (masters and clients,
// which name an address list and a count in settings): still accepted.
var oldFaultFields = map[string]string{"masters": "master_index", "clients": "client_index"}

// fieldsOf says which fault fields each kind uses (besides at and kind).
var fieldsOf = map[results.FaultKind][]string{
	results.FaultCrash:     {"master_index", "replica_index", "sentinel_index", "role", "restart"},
	results.FaultPartition: {"master_index", "client_index", "role", "link", "for"},
	results.FaultLatency:   {"master_index", "client_index", "link", "for", "latency", "jitter"},
	results.FaultReset:     {"master_index", "client_index", "for"},
	results.FaultPause:     {"client_index", "master_index", "role", "for"},
	results.FaultClockJump: {"master_index", "by"},
	// A replicated set's: the current master, whichever process it is.
	results.FaultFailover:       {},
	results.FaultReplicationLag: {"replica_index", "for"},
	// A database server's lock-holding sessions (topology postgres).
	results.FaultKillBackend: {"master_index"},
}

// decodeFaults reads a faults: list; where names it in errors.
func decodeFaults(ns []yaml.Node, where string) ([]Fault, error) {
	out := []Fault{}
	for j := range ns {
		f, err := decodeFault(&ns[j], fmt.Sprintf("%s[%d]", where, j))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func decodeFault(n *yaml.Node, where string) (Fault, error) {
	if n.Kind != yaml.MappingNode {
		return Fault{}, fmt.Errorf("line %d: %s: want a mapping such as {at: 2s, kind: crash, master_index: [1]}", n.Line, where)
	}
	var f faultYAML
	set := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := f.decodeField(n.Content[i], n.Content[i+1], where, set); err != nil {
			return Fault{}, err
		}
	}
	spec, err := f.spec(set)
	if err != nil {
		return Fault{}, fmt.Errorf("line %d: %s.%w", n.Line, where, err)
	}
	return spec, nil
}

// decodeField sets one field of a fault; set holds the fields written.
func (f *faultYAML) decodeField(k, v *yaml.Node, where string, set map[string]int) error {
	key := *k
	if nw, ok := oldFaultFields[k.Value]; ok {
		key.Value = nw
	}
	known := yamlNames(reflect.TypeOf(faultYAML{}))
	if !known[key.Value] {
		return fmt.Errorf("line %d: %s: %q is not a fault field; use one of %s", k.Line, where, k.Value, strings.Join(sortedKeys(known), ", "))
	}
	if _, twice := set[key.Value]; twice {
		return fmt.Errorf("line %d: %s.%s: given twice (masters and clients are the old names of master_index and client_index)", k.Line, where, key.Value)
	}
	if err := CheckWholeNumber(reflect.TypeOf(*f), key.Value, v); err != nil {
		return fmt.Errorf("line %d: %s.%s: %w", v.Line, where, k.Value, err)
	}
	one := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{&key, v}}
	if err := one.Decode(f); err != nil {
		return fmt.Errorf("line %d: %s.%s: %s", v.Line, where, k.Value, CleanYAMLValueError(err))
	}
	set[key.Value] = k.Line
	return nil
}

// spec checks the fault on its own (not against a cell) and converts it.
func (f faultYAML) spec(set map[string]int) (Fault, error) {
	kind := results.FaultKind(f.Kind)
	allowed, ok := fieldsOf[kind]
	if !ok {
		names := make([]string, len(results.FaultKinds))
		for i, k := range results.FaultKinds {
			names[i] = string(k)
		}
		return Fault{}, fmt.Errorf("kind: %q is not accepted; use %s", f.Kind, strings.Join(names, ", "))
	}
	for field := range set {
		if field != "at" && field != "at_until" && field != "kind" && !slices.Contains(allowed, field) {
			return Fault{}, fmt.Errorf("%s: not used by %s; it takes at, at_until, %s", field, kind, strings.Join(allowed, ", "))
		}
	}
	s := Fault{At: time.Duration(f.At), AtUntil: time.Duration(f.AtUntil), Kind: kind, Masters: f.MasterIndex, Clients: f.ClientIndex,
		Replicas: f.ReplicaIndex, Sentinels: f.SentinelIndex, For: time.Duration(f.For),
		Restart: f.Restart, Latency: time.Duration(f.Latency), Jitter: time.Duration(f.Jitter), By: time.Duration(f.By), Role: f.Role, Link: f.Link}
	return s, checkFault(s)
}

// checkFault: the fault's own values in range.
func checkFault(s Fault) error {
	switch {
	case s.At < 0:
		return fmt.Errorf("at: %v is not accepted; use 0 or a positive duration", s.At)
	case s.AtUntil != 0 && s.AtUntil <= s.At:
		return fmt.Errorf("at_until: %v is not accepted; use a moment after at (%v): the fault's moment is drawn in at..at_until per run", s.AtUntil, s.At)
	case s.For < 0:
		return fmt.Errorf("for: %v is not accepted; use a positive duration (or leave it out: until the end)", s.For)
	case s.Kind == results.FaultLatency && s.Latency <= 0:
		return fmt.Errorf("latency: %v is not accepted; use a positive duration such as 20ms", s.Latency)
	case s.Kind == results.FaultLatency && (s.Jitter < 0 || s.Jitter > s.Latency):
		return fmt.Errorf("jitter: %v is not accepted; use 0..latency (%v)", s.Jitter, s.Latency)
	case s.Kind == results.FaultClockJump && s.By == 0:
		return fmt.Errorf("by: is needed; use how far the clock jumps, such as 5s (negative: backwards)")
	case s.Role != "" && s.Role != "leader" && s.Role != "follower":
		return fmt.Errorf("role: %q is not accepted; use leader or follower (a consensus member by its role when the fault fires)", s.Role)
	case s.Kind == results.FaultPause && len(s.Clients) > 0 && (len(s.Masters) > 0 || s.Role != ""):
		return fmt.Errorf("client_index: pause stops clients or servers (master_index, role), not both in one fault")
	case s.Link != "" && s.Link != results.LinkClient && s.Link != results.LinkMembers:
		return fmt.Errorf("link: %q is not accepted; use client (clients from servers, the default) or members (a consensus member from the other members)", s.Link)
	case s.Link != "" && s.Kind != results.FaultPartition && s.Kind != results.FaultLatency:
		return fmt.Errorf("link: only partition and latency act on links; leave it out of %s", s.Kind)
	case s.MemberLinks() && len(s.Clients) > 0:
		return fmt.Errorf("client_index: not used with link: members (it acts on the links between members); leave it out, or use link: client")
	case s.MemberLinks() && s.Kind == results.FaultLatency && len(s.Masters) > 0:
		return fmt.Errorf("master_index: not used by latency with link: members (it delays every link between members); leave it out")
	case s.MemberLinks() && s.Kind == results.FaultPartition && len(s.Masters) == 0 && s.Role == "":
		return fmt.Errorf("master_index: is needed with link: members; name the member to cut off by index from 0, or by role: leader|follower")
	case s.Kind == results.FaultPartition && s.Role != "" && !s.MemberLinks():
		return fmt.Errorf("role: a partition by role cuts a member from the other members; add link: members (clients from servers: master_index)")
	case s.Role != "" && (len(s.Masters) > 0 || s.ByRole()):
		return fmt.Errorf("role: give either role or master_index/replica_index/sentinel_index, not both")
	case s.Kind == results.FaultCrash && len(s.Masters) == 0 && !s.ByRole() && s.Role == "":
		return fmt.Errorf("master_index: is needed; list the masters to crash by index from 0, such as [1] (a replicated set's: replica_index, sentinel_index)")
	case s.Kind == results.FaultClockJump && len(s.Masters) == 0:
		return fmt.Errorf("master_index: is needed; list the masters whose clock jumps by index from 0, such as [1]")
	}
	if s.Kind == results.FaultCrash {
		_, err := s.RestartDelay()
		return err
	}
	return nil
}

// ParseFaultFlag reads a --fault value: a kind, then field=value pairs,
// e.g. "crash at=2s master_index=1 restart=immediate" or
// "partition at=0s client_index=0 master_index=2,3 for=5s" (masters= and
// clients=, the old names, still work).
func ParseFaultFlag(s string) (Fault, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Fault{}, fmt.Errorf("fault: empty; use KIND at=DURATION field=value ..., such as \"crash at=2s master_index=1\"")
	}
	// The value as quoted back in errors: a master address typed into it
	// by mistake keeps its password out of the message.
	shown := make([]string, len(fields))
	for i, f := range fields {
		shown[i] = redact.URL(f)
	}
	doc, err := faultFlagYAML(fields, shown)
	if err != nil {
		return Fault{}, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil || len(n.Content) == 0 {
		return Fault{}, fmt.Errorf("fault: %q cannot be read; use KIND at=DURATION field=value ...", strings.Join(shown, " "))
	}
	spec, err := decodeFault(n.Content[0], "fault")
	if err != nil {
		// The line numbers of a one-flag document mean nothing.
		msg := lineNumber.ReplaceAllString(err.Error(), "")
		return Fault{}, fmt.Errorf("%s (in --fault %q)", msg, strings.Join(shown, " "))
	}
	return spec, nil
}

// faultFlagYAML writes a --fault value's fields as a YAML mapping.
func faultFlagYAML(fields, shown []string) (string, error) {
	var doc strings.Builder
	fmt.Fprintf(&doc, "kind: %q\n", fields[0])
	for i, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", fmt.Errorf("fault: %q is not field=value in %q", shown[i+1], strings.Join(shown, " "))
		}
		if _, old := oldFaultFields[k]; old || strings.HasSuffix(k, "_index") {
			v = "[" + v + "]"
		} else {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&doc, "%s: %s\n", k, v)
	}
	return doc.String(), nil
}

func yamlNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" {
			out[tag] = true
		}
	}
	return out
}
