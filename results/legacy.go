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

// LegacyVersion is a config or manifest key under which results written
// before ServerVersion kept a service's servers' version bare ("7.0.15"),
// and the server's name it reads with ("NAME 7.0.15"). The service's
// package registers it.
type LegacyVersion struct {
	Key, Server string
}

var (
	legacyMu       sync.RWMutex
	legacy         []LegacyService
	legacyVersions []LegacyVersion
)

// RegisterLegacyVersion makes an old version key readable.
func RegisterLegacyVersion(l LegacyVersion) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacyVersions = append(legacyVersions, l)
}

// legacyVersion is the server version an old key in fields holds ("":
// none).
func legacyVersion(fields map[string]json.RawMessage) string {
	for _, l := range legacyVersions {
		var v string
		if json.Unmarshal(fields[l.Key], &v) == nil && v != "" {
			return l.Server + " " + v
		}
	}
	return ""
}

// UpgradeLegacyManifest fills m's server versions from raw (the
// manifest's JSON) when it was written before they were.
func UpgradeLegacyManifest(m *Manifest, raw []byte) {
	var old map[string]json.RawMessage
	if len(m.ServerVersions) > 0 || json.Unmarshal(raw, &old) != nil {
		return
	}
	legacyMu.RLock()
	defer legacyMu.RUnlock()
	if v := legacyVersion(old); v != "" {
		m.ServerVersions = []string{v}
	}
}

// RegisterLegacy makes an old section readable.
func RegisterLegacy(l LegacyService) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacy = append(legacy, l)
}

// UpgradeLegacy fills run's server version, service section and servers
// from raw (the result's JSON) when it was written before they were.
func UpgradeLegacy(run *Run, raw []byte) {
	c := run.Config
	if c == nil {
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
	if c.ServerVersion == "" {
		c.ServerVersion = legacyVersion(old.Config)
	}
	if c.Service != nil {
		return
	}
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
