package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A Design is a lock as a user would deploy it, for lockbench choose: its
// settings over the matrix's shared work (a setting "unset" takes the
// shared one out: an advisory lock has no lease). FixedTTL: its lock
// expires at its TTL whatever the holder does (Redis'), where a session's
// keeps itself alive.
type Design struct {
	Name, Settings string
	FixedTTL       bool
}

// Designs are each registered topology's, in TopologyNames' order.
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

// clientBases are the designs whose servers an external client's design
// runs on, by the topology its spec names (redlock when it names none).
var clientBases = map[string]string{"redlock": "redlock-5-mux", "single": "single-fixed-ttl"}

var (
	clientName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
	// clientUnsafe are what a design's settings list (comma-separated,
	// "key: value", YAML flow) cannot carry in a value.
	clientUnsafe = regexp.MustCompile(`[,{}\[\]#"'\\]|: |:$|[[:cntrl:]]`)
)

// ClientDesign is an external client's design from lockbench choose's
// --client NAME[@TOPOLOGY]=CMD: the servers of the topology's design
// (redlock: redlock-5-mux's 5 masters; single: one master), its adapter
// the lock client. It asks no watchdog: the design is the library's own
// lock, of fixed TTL (node-redlock 4.2.0 and redis-py's Lock renew
// nothing by themselves), with single-fixed-ttl's cells not applicable.
func ClientDesign(spec string) (Design, error) {
	const accepted = "use NAME=CMD or NAME@single=CMD (e.g. node-redlock=adapters/node-redlock/adapter.js)"
	nameTopo, cmd, ok := strings.Cut(spec, "=")
	name, topo, _ := strings.Cut(nameTopo, "@")
	if topo == "" {
		topo = "redlock"
	}
	cmd = strings.TrimSpace(cmd)
	switch {
	case !ok || cmd == "":
		return Design{}, fmt.Errorf("client: %q is not accepted; %s", spec, accepted)
	case !clientName.MatchString(name):
		return Design{}, fmt.Errorf("client: name %q is not accepted; use lower-case letters, digits, '.' and '-' (%s)", name, accepted)
	case slices.Contains(DesignNames(), name):
		return Design{}, fmt.Errorf("client: name %q is a design of lockbench's own; give the client another", name)
	case clientBases[topo] == "":
		return Design{}, fmt.Errorf("client: topology %q is not accepted; use redlock (the default) or single", topo)
	case clientUnsafe.MatchString(cmd):
		return Design{}, fmt.Errorf("client: command %q is not accepted; give a program and plain arguments, without , { } [ ] # quotes, backslashes or ': '", cmd)
	}
	base, _ := DesignNamed(clientBases[topo])
	var settings []string
	for _, kv := range strings.Split(base.Settings, ", ") {
		if k, _, _ := strings.Cut(kv, ": "); k != "watchdog" {
			settings = append(settings, kv)
		}
	}
	settings = append(settings, `client: "`+cmd+`"`)
	return Design{Name: name, Settings: strings.Join(settings, ", "), FixedTTL: true}, nil
}

// Client is the design's external client command ("" for lockbench's
// own clients).
func (d Design) Client() string {
	for _, kv := range strings.Split(d.Settings, ", ") {
		if k, v, ok := strings.Cut(kv, ": "); ok && k == "client" {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}
