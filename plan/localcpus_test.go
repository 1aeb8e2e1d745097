package plan

import (
	"strings"
	"testing"
)

func TestLocalCPUsValidation(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Settings)
		want string
	}{
		{func(s *Settings) { s.LocalCPUs = "x" }, "local-cpus: \"x\" is not a CPU list"},
		{func(s *Settings) { s.LocalCPUs = "0"; s.Masters = []string{"127.0.0.1:7000"} }, "local-cpus: pins local masters"},
		{func(s *Settings) { s.LocalCPUs = "0"; s.Embedded = "always" }, "local-cpus: needs real redis-server masters"},
		{func(s *Settings) { s.LocalCPUs = "0-4095" }, "local-cpus: CPU"},
	} {
		s := Defaults()
		c.mod(&s)
		if _, err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", s.LocalCPUs, err, c.want)
		}
	}
}
