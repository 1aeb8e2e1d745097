package results

import (
	"encoding/json"
	"sync"
)

// LegacyService reads what a result written before the service section
// kept under a lock service's own key: its section of the config and its
// own name for servers. The service's package registers it, so that old
// results still read as that service's, not as Redis'.
type LegacyService struct {
	Key        string // its config section ("lease_ttl", ... under its name)
	ServersKey string // its own name for servers:
	Read       func(section json.RawMessage, rec Settings) *ServiceSettings
}

var (
	legacyMu sync.RWMutex
	legacy   []LegacyService
)

// RegisterLegacy makes an old section readable.
func RegisterLegacy(l LegacyService) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacy = append(legacy, l)
}

// UpgradeLegacy fills run's service section and servers from raw (the
// result's JSON) when it was written before they were.
func UpgradeLegacy(run *Run, raw []byte) {
	c := run.Config
	if c == nil || c.Service != nil {
		return
	}
	var old struct {
		Config map[string]json.RawMessage `json:"config"`
	}
	if json.Unmarshal(raw, &old) != nil {
		return
	}
	legacyMu.RLock()
	defer legacyMu.RUnlock()
	for _, l := range legacy {
		if b, ok := old.Config[l.ServersKey]; ok && len(c.Servers) == 0 {
			var one string
			if json.Unmarshal(b, &c.Servers) != nil && json.Unmarshal(b, &one) == nil && one != "" {
				c.Servers = []string{one}
			}
		}
		if b, ok := old.Config[l.Key]; ok && c.Topology == l.Key {
			c.Service = l.Read(b, c.Settings)
		}
	}
}
