package service

import (
	"context"
	"io"
	"slices"
)

// Optional capabilities of a service, which the commands outside a cell
// use without naming a service: lockbench without arguments installs the
// default topology's server program (Installer), lockbench adapter check
// starts a design's servers for an external client (CheckServers), and
// lockbench version prints the client libraries' versions (Libraries).

// Installer is a service whose server program may be missing here and
// that can install it (as root, from the system's packages).
type Installer interface {
	// Install installs the program when it is missing and this process
	// may, saying so on w: nil when the program is here (already or now),
	// else a NotInstalled.
	Install(w io.Writer) error
}

// NotInstalled is a server program missing here and not installed: why
// not, and how to install it ("apt-get install …").
type NotInstalled struct{ Program, Why, Hint string }

func (e NotInstalled) Error() string { return e.Program + " not found (" + e.Why + ")" }

// CheckServers is a service whose designs run an external lock client
// (--client): lockbench adapter check starts n of its local servers and
// ends a lock behind its holder's back on them.
type CheckServers interface {
	StartCheckServers(ctx context.Context, n int, log io.Writer) (CheckSet, error)
}

// CheckSet are the servers adapter check started.
type CheckSet interface {
	Addrs() []string // as the adapter is told them
	// DropKey deletes key on every server: the lock ends behind its
	// holder's back.
	DropKey(ctx context.Context, key string) error
	Stop() error
}

// Libraries is a service whose client libraries shape what is measured
// (their module paths): lockbench version prints their versions.
type Libraries interface {
	Libraries() []string
}

// LibraryPaths are every registered service's client libraries, sorted,
// each once.
func LibraryPaths() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for _, s := range services {
		if l, ok := s.(Libraries); ok {
			out = append(out, l.Libraries()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
