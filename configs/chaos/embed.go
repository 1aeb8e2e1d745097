// Package chaosconfigs holds the shipped chaos scenarios (lockbench chaos
// -f NAME), embedded so that lockbench finds them wherever it runs. They
// live apart from the sweep scenarios in configs/, which have another shape.
package chaosconfigs

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Get returns a shipped scenario by name: "crash", "crash.yaml",
// "chaos-crash" or "chaos-crash.yaml".
func Get(name string) ([]byte, bool) {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "chaos-"), ".yaml")
	b, err := files.ReadFile(name + ".yaml")
	return b, err == nil
}

// Names lists the shipped scenarios.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}
