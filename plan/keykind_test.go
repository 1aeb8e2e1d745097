package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// A setting key is taken by a benchmark, a fault scenario or both; a key
// of the other kind is refused, naming itself and its line, in every
// place a setting is written (settings, a named cell's settings, the
// matrix) and as a flag. A fault scenario's own key in a file makes it a
// fault scenario (as faults: does; expect: does not), so in a benchmark
// it is refused as a flag. keyKinds is the whole table: every key, by
// kind.
var keyKinds = map[string]string{
	// both kinds
	"local": "both", "persistence": "both", "workers": "both", "keys": "both", "ttl": "both", "lease_time": "both",
	"timeout": "both", "drift_factor": "both", "mode": "both", "wait": "both", "hold": "both", "hold_distribution": "both",
	"retry_delay_min": "both", "retry_delay_max": "both", "duration": "both", "seed": "both", "wait_strategy": "both",
	"wait_time": "both", "backoff_base": "both", "backoff_cap": "both", "notify_timeout": "both", "topology": "both",
	"replicas": "both", "sentinels": "both", "wait_replicas": "both", "wait_timeout": "both", "down_after": "both",
	"failover_timeout": "both", "min_replicas_to_write": "both", "replica_priority": "both",
	// fault scenarios only
	"clients": "fault", "client_mode": "fault", "fencing": "fault", "check_validity": "fault", "guarded_write": "fault", "long_hold": "fault",
	"acquisitions": "fault", "min_acquisitions": "fault", "calls": "fault", "stock": "fault",
	// benchmarks only
	"masters": "bench", "embedded": "bench", "local_cpus": "bench", "net_latency": "bench", "net_jitter": "bench",
	"tls_ca": "bench", "tls_cert": "bench", "tls_key": "bench", "tls_insecure": "bench", "sentinel_addrs": "bench",
	"master_set": "bench", "servers": "bench", "etcd_endpoints": "bench", "member_latency": "bench", "postgres_url": "bench",
	"zookeeper_servers": "bench", "driver": "both", "client": "both", "watchdog": "both", "retries": "bench", "batch": "bench", "dispatchers": "bench",
	"flush_delay": "bench", "load": "bench", "rate": "bench", "warmup": "bench", "distribution": "bench",
	"zipf_exponent": "bench", "hotspot_ops": "bench", "hotspot_keys": "bench", "auto_extend": "bench",
	"key_prefix": "bench", "force": "bench", "segment": "bench", "start_at": "bench",
	// masters: N, the old name of local in a fault scenario, is a count
	// there and refused (told to use local) in a benchmark.
	"masters: 3": "fault",
}

// keyQuirks are the exceptions to keyKinds, by "key, kind, place": the
// old masters: N is read as local only where a setting is written (a
// matrix value is a list of addresses; the flag is a count only in
// chaos, run and sweep take it as an address).
var keyQuirks = map[string]bool{
	"masters: 3, benchmark, matrix":      true, // then refused as a value: masters want a list
	"masters: 3, benchmark, flag":        true, // then refused as an address
	"masters: 3, fault scenario, matrix": false,
}

func TestKeyByScenarioKind(t *testing.T) {
	for name := range SettingNames() {
		if _, ok := keyKinds[name]; !ok && name != "-" {
			t.Errorf("setting %s is not in keyKinds: say which kind of scenario takes it", name)
		}
	}
	for key, want := range keyKinds {
		for _, fault := range []bool{false, true} {
			for _, place := range []string{"settings", "cells", "matrix", "flag"} {
				accepted, quirk := keyQuirks[key+", "+kindName(fault)+", "+place]
				if !quirk {
					accepted = want == "both" || (want == "fault") == fault
				}
				got, madeFault, err := keyAccepted(key, fault, place)
				if got != accepted && !(want == "fault" && got && madeFault) {
					t.Errorf("%s in a %s's %s: accepted %v, want %v (%v)", key, kindName(fault), place, got, accepted, err)
				}
			}
		}
	}
}

func kindName(fault bool) string {
	if fault {
		return "fault scenario"
	}
	return "benchmark"
}

// keyAccepted writes key in place of a scenario of the kind and says
// whether it was taken as a setting (a later error of its value or of the
// cell is not a refusal of the key), and whether it made the file a fault
// scenario.
func keyAccepted(key string, fault bool, place string) (accepted, madeFault bool, err error) {
	name, value, ok := strings.Cut(key, ": ")
	if !ok {
		value = keyValue(key)
	}
	if place == "flag" {
		accepted, err := flagAccepted(name, value, fault)
		return accepted, false, err
	}
	head := ""
	if fault {
		head = "faults: []\n"
	}
	doc := map[string]string{
		"settings": head + "settings:\n  " + name + ": " + value + "\n",
		"cells":    head + "cells:\n  - name: a\n    settings:\n      " + name + ": " + value + "\n",
		"matrix":   head + "matrix:\n  " + name + ": [" + value + "]\n",
	}[place]
	line := map[string]int{"settings": 3, "cells": 5, "matrix": 3}[place]
	if !fault {
		line--
	}
	sc, err := Parse("x.yaml", []byte(doc), false)
	return !refusal(err, name, line), !fault && sc != nil && sc.Faulty, err
}

// flagAccepted sets --name value on the flags the kind's command binds
// and lays them over a scenario of that kind.
func flagAccepted(name, value string, fault bool) (bool, error) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	s, bind, doc := Defaults(), BindFlags, "settings: {}\n"
	if fault {
		s, bind, doc = FaultDefaults(), BindFaultFlags, "faults: []\n"
	}
	bind(fs, &s)
	if err := fs.Parse([]string{"--" + FlagName(name), value}); err != nil {
		return !strings.Contains(err.Error(), "unknown flag") && !strings.Contains(err.Error(), "give how many with --local N"), err
	}
	sc, err := Parse("x.yaml", []byte(doc), false)
	if err != nil {
		return false, err
	}
	err = sc.Override(fs, bind)
	return !refusal(err, settingAlias(name), 0), err
}

// refusal: err refuses setting name as one of the other kind of
// scenario, at the line (0: a flag, no line).
func refusal(err error, name string, line int) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	if line > 0 && !strings.Contains(msg, fmt.Sprintf("line %d: ", line)) {
		return false
	}
	return slices.ContainsFunc([]string{name + ": not available in a fault scenario", name + ": only for fault scenarios",
		"masters: a fault scenario starts its own masters", "masters: a list of addresses"}, func(p string) bool { return strings.Contains(msg, p) })
}

// keyValue is a value of the setting's type: the fault defaults' (what a
// fault scenario starts from), or an address for a list of them.
func keyValue(name string) string {
	switch name {
	case "masters", "sentinel_addrs", "zookeeper_servers", "etcd_endpoints":
		return "127.0.0.1:6379"
	case "replica_priority":
		return "1"
	}
	var n yaml.Node
	if err := n.Encode(FaultDefaults()); err != nil {
		panic(err)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == settingAlias(name) {
			return n.Content[i+1].Value
		}
	}
	panic(errors.New("no setting " + name))
}

// onlyIn are the settings only a kind of scope keys takes.
func onlyIn(keys scope) []string {
	var out []string
	for _, n := range sortedKeys(settingScopes) {
		if settingScopes[n] == keys {
			out = append(out, n)
		}
	}
	return out
}
