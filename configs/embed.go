// Package configs holds the shipped scenario files, embedded so that
// `lockbench` finds them wherever the binary runs.
package configs

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Get returns a shipped scenario by name ("quickstart" or "quickstart.yaml").
func Get(name string) ([]byte, bool) {
	if !strings.HasSuffix(name, ".yaml") {
		name += ".yaml"
	}
	b, err := files.ReadFile(name)
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
