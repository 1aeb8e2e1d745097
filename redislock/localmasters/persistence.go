package localmasters

import (
	"fmt"
	"strings"

	"lockbench/internal/redisserver"
)

// Persistence selects how a real master persists writes. It matters for
// Redlock because a master that forgets a lock after a crash and restart
// breaks mutual exclusion unless the clients delay reacquisition.
type Persistence string

const (
	PersistNone        Persistence = "none"         // --save "" --appendonly no
	PersistAOFNo       Persistence = "aof-no"       // --appendonly yes --appendfsync no
	PersistAOFEverysec Persistence = "aof-everysec" // --appendonly yes --appendfsync everysec
	PersistAOFAlways   Persistence = "aof-always"   // --appendonly yes --appendfsync always
)

var allPersistence = []Persistence{PersistNone, PersistAOFNo, PersistAOFEverysec, PersistAOFAlways}

// AllPersistence returns every accepted mode, in order of increasing durability.
func AllPersistence() []Persistence {
	return append([]Persistence(nil), allPersistence...)
}

// ParsePersistence parses a mode name (case and surrounding space are ignored).
func ParsePersistence(s string) (Persistence, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	for _, p := range allPersistence {
		if string(p) == v {
			return p, nil
		}
	}
	return "", fmt.Errorf("invalid persistence %q: accepted values are %s", s, persistenceList())
}

func persistenceList() string {
	names := make([]string, len(allPersistence))
	for i, p := range allPersistence {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// redisArgs returns the redis-server flags for this mode. RDB snapshots are
// always off so that "none" (redisserver.NoPersistence, as the protected
// resource's) really means nothing survives a restart and the aof-* modes
// are measured without snapshot forks.
func (p Persistence) redisArgs() []string {
	args := []string{"--save", ""}
	switch p {
	case PersistNone:
		return redisserver.NoPersistence()
	case PersistAOFNo:
		return append(args, "--appendonly", "yes", "--appendfsync", "no")
	case PersistAOFEverysec:
		return append(args, "--appendonly", "yes", "--appendfsync", "everysec")
	case PersistAOFAlways:
		return append(args, "--appendonly", "yes", "--appendfsync", "always")
	}
	panic("localmasters: unvalidated persistence " + string(p))
}
