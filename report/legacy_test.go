package report

import (
	"encoding/json"
	"testing"

	_ "lockbench/etcdlock" // registers etcd's old result section
	"lockbench/results"
)

// A result written before the service section still reads as etcd's: its
// old section and its servers' own name are upgraded, not dropped (it
// would read as Redis' then: "3 masters", the one-thread rule).
func TestOldServiceSectionsStillRead(t *testing.T) {
	raw := []byte(`{"config": {"topology": "etcd", "local": 0, "persistence": "", "etcd_endpoints": ["127.0.0.1:2379", "127.0.0.1:2380"],
		"etcd": {"lease_ttl": "10s", "fence_source": "etcd: the revision", "lost_sessions": 2, "rpcs_per_cycle": 3.5}}}`)
	var r results.Run
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	results.UpgradeLegacy(&r, raw)
	v := r.Config.Service
	switch {
	case v == nil:
		t.Fatal("the old etcd section was dropped")
	case v.Lease != "lease 10s" || v.Lost != 2 || v.CallsPerCycle != 3.5 || v.Server != "member":
		t.Errorf("service %+v", v)
	case len(r.Config.Servers) != 2 || v.Servers != "2 endpoints":
		t.Errorf("servers %v, %q; want the old endpoints", r.Config.Servers, v.Servers)
	}
}

// A result and a manifest written before server_version name Redis'
// version under their old key: it reads as the servers' version (Redis'
// package registers the key).
func TestOldRedisServerVersionStillReads(t *testing.T) {
	raw := []byte(`{"config": {"topology": "redlock", "local": 5, "redis_server_version": "7.0.15"}}`)
	var r results.Run
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	results.UpgradeLegacy(&r, raw)
	if got := r.Config.ServerVersion; got != "redis-server 7.0.15" {
		t.Errorf("cell's server version %q; want redis-server 7.0.15", got)
	}
	var m results.Manifest
	rawm := []byte(`{"name": "old", "redis_server_version": "7.0.15"}`)
	if err := json.Unmarshal(rawm, &m); err != nil {
		t.Fatal(err)
	}
	results.UpgradeLegacyManifest(&m, rawm)
	if len(m.ServerVersions) != 1 || m.ServerVersions[0] != "redis-server 7.0.15" {
		t.Errorf("manifest's server versions %q; want [redis-server 7.0.15]", m.ServerVersions)
	}
}
