package plan

import (
	"strings"
	"testing"
)

// choose --client NAME[@TOPOLOGY]=CMD: the topology's design's servers,
// no watchdog, the command as the client; bad input names client and
// what is accepted.
func TestClientDesign(t *testing.T) {
	d, err := ClientDesign("node-redlock=adapters/node-redlock/adapter.js")
	if err != nil {
		t.Fatal(err)
	}
	want := `topology: redlock, local: 5, persistence: none, mode: multiplexed, client: "adapters/node-redlock/adapter.js"`
	if d.Name != "node-redlock" || d.Settings != want || !d.FixedTTL || d.Client() != "adapters/node-redlock/adapter.js" {
		t.Errorf("got %+v (client %q); want settings %s, fixed TTL", d, d.Client(), want)
	}
	d, err = ClientDesign("redis-py@single=/usr/bin/python3 adapters/redis-py/adapter.py")
	if err != nil || d.Settings != `topology: single, local: 1, persistence: none, client: "/usr/bin/python3 adapters/redis-py/adapter.py"` {
		t.Errorf("single: %+v, %v", d, err)
	}
	for spec, seen := range map[string]string{
		"node-redlock":           `client: "node-redlock" is not accepted; use NAME=CMD`,
		"x=":                     `client: "x=" is not accepted`,
		"Node=x":                 `client: name "Node" is not accepted`,
		"single=x":               `client: name "single" is a design of lockbench's own`,
		"x@replicated=cmd":       `client: topology "replicated" is not accepted; use redlock (the default) or single`,
		"x=cmd --a,b":            `client: command "cmd --a,b" is not accepted`,
		"x=cmd {a}":              `client: command "cmd {a}" is not accepted`,
		`x=cmd "a"`:              `client: command "cmd \"a\"" is not accepted`,
		"x=cmd key: v":           `client: command "cmd key: v" is not accepted`,
		"x@single=cmd # comment": `client: command "cmd # comment" is not accepted`,
	} {
		if _, err := ClientDesign(spec); err == nil || !strings.HasPrefix(err.Error(), seen) {
			t.Errorf("%q: %v; want %q…", spec, err, seen)
		}
	}
}
