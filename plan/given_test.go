package plan

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// A setting is known as given whatever its value: one of another topology
// given at its default is refused like any other (flags and YAML).
func TestGivenAtDefaultRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // error prefix; "" accepted
	}{
		{[]string{"--topology", "redlock", "--replicas", "2"}, "replicas: 2 needs topology replicated"},
		{[]string{"--topology", "single", "--local", "1", "--sentinels", "3"}, "sentinels: 3 needs topology replicated"},
		{[]string{"--topology", "etcd", "--mode", "multiplexed"}, "mode/wait:"},
		{[]string{"--topology", "etcd", "--driver", "lockbench"}, "driver:"},
		{[]string{"--topology", "replicated", "--replicas", "2"}, ""},
		{[]string{"--topology", "redlock", "--local", "5"}, ""},
	} {
		err := validateFlags(t, tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v, want accepted", tc.args, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	sc, err := Parse("given.yaml", []byte("settings: {topology: single, local: 1, replicas: 2}\n"), false)
	if err == nil {
		_, err = sc.Cells()
	}
	if err == nil || !strings.Contains(err.Error(), "replicas: 2 needs topology replicated") {
		t.Errorf("YAML replicas at its default with topology single: %v", err)
	}
}

// validateFlags is run's settings from args on the defaults, validated.
func validateFlags(t *testing.T, args []string) error {
	t.Helper()
	s := Defaults()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs, &s)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	_, err := s.Validate()
	return err
}
