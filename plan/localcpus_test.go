package plan

import (
	"strings"
	"testing"
)

// The settings' own checks of local-cpus (pure); whether this machine has
// the CPUs is pool.CanServe's (redislock/canserve_test.go).
func TestLocalCPUsValidation(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Settings)
		want string
	}{
		{func(s *Settings) { s.LocalCPUs = "x" }, "local-cpus: \"x\" is not a CPU list"},
		{func(s *Settings) { s.LocalCPUs = "0-4096" }, "local-cpus: \"0-4096\" is not a CPU list"},
		{func(s *Settings) { s.LocalCPUs = "0"; s.Masters = []string{"127.0.0.1:7000"} }, "local-cpus: pins local masters"},
		{func(s *Settings) { s.LocalCPUs = "0"; s.Embedded = "always" }, "local-cpus: needs real redis-server masters"},
	} {
		s := Defaults()
		c.mod(&s)
		if _, err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", s.LocalCPUs, err, c.want)
		}
	}
	// CPUs this machine lacks are not the settings' fault: Validate, which
	// looks nothing up, lets them pass.
	s := Defaults()
	s.LocalCPUs = "0-4095"
	if _, err := s.Validate(); err != nil {
		t.Errorf("local-cpus 0-4095 judged by the machine in Validate: %v", err)
	}
}
