package cli

import (
	"fmt"
	"io"
	"runtime/debug"
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
// client libraries it measures with, as the binary records them.
func PrintVersion(w io.Writer, version string) {
	fmt.Fprintln(w, "lockbench", version)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	fmt.Fprintln(w, bi.GoVersion)
	for _, d := range bi.Deps {
		for _, lib := range versionedLibs {
			if d.Path == lib {
				fmt.Fprintf(w, "%s %s\n", d.Path, d.Version)
			}
		}
	}
}

// versionedLibs are the clients whose versions shape what is measured.
var versionedLibs = []string{"github.com/redis/rueidis", "github.com/go-redsync/redsync/v4", "go.etcd.io/etcd/client/v3",
	"github.com/go-zookeeper/zk", "github.com/jackc/pgx/v5", "github.com/HdrHistogram/hdrhistogram-go"}
