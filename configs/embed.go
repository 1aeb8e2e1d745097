// Package configs holds the shipped scenario files, embedded so that
// `lockbench` finds them wherever the binary runs: benchmark scenarios at
// the top, fault scenarios in chaos/. They have one format (plan.Scenario).
package configs

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml chaos/*.yaml
var files embed.FS

// Get returns a shipped scenario by name: "quickstart" or
// "quickstart.yaml"; a fault scenario also as "crash", "chaos-crash" or
// "chaos/crash.yaml".
func Get(name string) ([]byte, bool) {
	name = strings.TrimSuffix(name, ".yaml")
	if b, err := files.ReadFile(name + ".yaml"); err == nil && !strings.Contains(name, "/") {
		return b, true
	}
	name = strings.TrimPrefix(strings.TrimPrefix(name, "chaos/"), "chaos-")
	b, err := files.ReadFile("chaos/" + name + ".yaml")
	return b, err == nil
}

// Names lists the shipped benchmark scenarios.
func Names() []string { return names(".") }

// FaultNames lists the shipped fault scenarios.
func FaultNames() []string { return names("chaos") }

func names(dir string) []string {
	entries, _ := fs.ReadDir(files, dir)
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
