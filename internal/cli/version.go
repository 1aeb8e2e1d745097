package cli

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"
)

// BuildVersion is set (main's -ldflags "-X main.version=…") when it is not
// "dev"; otherwise the commit the binary was built from (go build records
// it), "+dirty" with uncommitted changes.
func BuildVersion(set string) string {
	bi, ok := debug.ReadBuildInfo()
	if set != "dev" || !ok {
		return set
	}
	rev, dirty := "", ""
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return set
	}
	return rev + dirty
}

// PrintVersion writes lockbench's version, Go's, and the versions of the
// client libraries it measures with (libs: the lock services', by module
// path; lockbench's own histograms are added), as the binary records them.
func PrintVersion(w io.Writer, version string, libs []string) {
	libs = append(slices.Clone(libs), ownLibs...)
	fmt.Fprintln(w, "lockbench", version)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	fmt.Fprintln(w, bi.GoVersion)
	for _, d := range bi.Deps {
		for _, lib := range libs {
			if d.Path == lib {
				fmt.Fprintf(w, "%s %s\n", d.Path, d.Version)
			}
		}
	}
}

// ownLibs are lockbench's own libraries whose versions shape what is
// measured (the lock clients' are their services').
var ownLibs = []string{"github.com/HdrHistogram/hdrhistogram-go"}
