package plan

import (
	"strings"
	"testing"
)

// topology postgres: its settings accepted, every other refused with one
// line naming it, a password never echoed.
func TestPostgresSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // error prefix; "" accepted
	}{
		{[]string{"--topology", "postgres"}, ""},
		{[]string{"--topology", "postgres", "--wait-strategy", "queue", "--wait-time", "2s"}, ""},
		{[]string{"--topology", "postgres", "--postgres-url", "postgres://u:pw@127.0.0.1:5432/db"}, ""},
		{[]string{"--topology", "postgres", "--local", "1"}, ""},
		{[]string{"--topology", "postgres", "--local", "3"}, "local:"},
		{[]string{"--topology", "postgres", "--ttl", "10s"}, "ttl:"},
		{[]string{"--topology", "postgres", "--persistence", "none"}, "persistence:"},
		{[]string{"--topology", "postgres", "--wait-strategy", "notify"}, "wait-strategy:"},
		{[]string{"--topology", "postgres", "--mode", "sequential"}, "mode/wait:"},
		{[]string{"--topology", "postgres", "--timeout", "50ms"}, "timeout:"},
		{[]string{"--topology", "postgres", "--replicas", "2"}, "replicas:"},
		{[]string{"--topology", "postgres", "--postgres-url", "mysql://u:secretpw@h:1/x"}, "postgres-url:"},
		{[]string{"--topology", "redlock", "--postgres-url", "postgres://h:1/x"}, "postgres-url:"},
	} {
		err := validateFlags(t, tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v, want accepted", tc.args, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%v: %v, want one line starting %q", tc.args, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "secretpw"):
			t.Errorf("%v: the password is in %q", tc.args, err)
		}
	}
	s := Defaults()
	s.Topology, s.Servers = "postgres", []string{"postgres://u:secretpw@h:1/x"}
	if strings.Contains(s.Redacted().Servers[0], "secretpw") {
		t.Errorf("Redacted keeps the password: %s", s.Redacted().Servers)
	}
}
