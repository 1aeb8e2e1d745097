package plan

import (
	"strings"
	"testing"

	"lockbench/configs"
)

// FuzzParseSweep: any bytes either give a scenario whose every cell is
// valid, or one "config:" error; never a panic.
func FuzzParseSweep(f *testing.F) {
	for _, name := range configs.Names() {
		b, _ := configs.Get(name)
		f.Add(b)
	}
	f.Add([]byte("settings:\n  workers: [1]\n"))
	f.Add([]byte("matrix:\n  rate: [1e309]\n"))
	f.Add([]byte("settings: {ttl: 1ms, timeout: 1ms}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		sw, err := ParseSweep("fuzz.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config:") {
				t.Fatalf("error without the config prefix: %v", err)
			}
			return
		}
		cells, err := sw.Cells()
		if err != nil {
			t.Fatalf("parsed, then failed to expand: %v", err)
		}
		if len(cells) > 1_000_000 {
			return
		}
		for _, c := range cells {
			if _, err := c.Settings.Validate(); err != nil {
				t.Fatalf("parsed, but cell %s is invalid: %v", c.Label, err)
			}
		}
	})
}
