// Package chaos runs Redlock under faults and checks what the lock promised:
// clients do read-modify-writes on a protected resource (a counter per lock
// key in its own redis-server) while faults are injected on a schedule, and
// checkers count mutual-exclusion violations (overlapping validity windows),
// lost updates and availability. Clients are goroutine groups or separate
// processes, each with its own connections (and proxies) to the masters.
package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"lockbench/engine"
	"lockbench/faults"
	"lockbench/plan"
)

// Settings are one cell's settings: the lock-load settings of run and sweep
// (plan.Settings, of which chaos takes the part in SharedSettings) and
// chaos' own. YAML names are the flag names with "-" written as "_".
type Settings struct {
	plan.Settings `yaml:",inline"`
	Clients       int `yaml:"clients" json:"clients"`
	// ClientMode: goroutines (each client a group of goroutines with its own
	// connections) or processes (each client a lockbench process).
	ClientMode string `yaml:"client_mode" json:"client_mode"`
	// Fencing: every acquire takes a token (INCR at the resource) and the
	// resource refuses reads and writes older than a token it has seen.
	Fencing bool `yaml:"fencing" json:"fencing"`
	// CheckValidity: skip the write when the lock's validity ran out during
	// the hold (a careful client; a pause after the check still loses).
	CheckValidity bool `yaml:"check_validity" json:"check_validity"`
	// Acquisitions, when set, ends the cell once this many locks were
	// taken (each client stops after its share); duration is the cap.
	Acquisitions int64 `yaml:"acquisitions" json:"acquisitions"`
	// MinAcquisitions: a cell with fewer acquisitions, or fewer
	// acknowledged writes, judged too little to show anything and fails
	// (0: no minimum).
	MinAcquisitions int64 `yaml:"min_acquisitions" json:"min_acquisitions"`
}

// SharedSettings are the plan settings (YAML names) a chaos cell takes. In
// chaos, workers are per client; hold is the gap between reading the
// counter and writing it back, inside the lock (where an overlapping holder
// loses an update); hold_distribution draws each hold around it. The others
// (external masters, driver, open loop, key distributions, ...) do not
// apply: chaos starts, crashes and restarts its own masters.
var SharedSettings = []string{"local", "persistence", "workers", "keys", "ttl", "timeout", "drift_factor", "mode", "wait",
	"hold", "hold_distribution", "retry_delay_min", "retry_delay_max", "duration", "seed"}

// deprecatedNames are names a chaos setting had before it took plan's
// (masters was a count; it now means master addresses everywhere): still
// accepted, as the new name.
var deprecatedNames = map[string]string{"masters": "local"}

// DefaultSettings are the settings a scenario starts from.
func DefaultSettings() Settings {
	p := plan.Defaults()
	p.Local, p.Persistence, p.Workers, p.Keys = 3, "none", 16, 16
	p.TTL, p.Hold, p.HoldDist = plan.Duration(2*time.Second), plan.Duration(100*time.Millisecond), "uniform"
	p.RetryMin, p.RetryMax = plan.Duration(time.Millisecond), plan.Duration(10*time.Millisecond)
	p.Duration, p.Warmup = plan.Duration(10*time.Second), 0
	return Settings{Settings: p, Clients: 2, ClientMode: "goroutines", MinAcquisitions: 10}
}

// ClientModes are the accepted client modes.
var ClientModes = []string{"goroutines", "processes"}

// EngineConfig is the lock client's part (masters not set).
func (s Settings) EngineConfig() engine.Config {
	c, _ := s.Settings.EngineConfig() // errs only on TLS files, which chaos does not take
	c.Masters = nil
	c.Retries = 0 // the client loop retries itself, so every attempt is counted
	return c
}

// Validate names the first bad setting, its value and what is accepted:
// chaos' bounds first (it starts every master and client itself), then
// plan's checks of the shared settings, then chaos' own fields.
func (s Settings) Validate() error {
	switch {
	case len(s.Masters) > 0:
		return fmt.Errorf("masters: chaos starts its own masters (it crashes and restarts them); use local: N (how many), not addresses")
	case s.Local < 1 || s.Local > 15:
		return fmt.Errorf("local: %d is not accepted; use 1..15 local masters", s.Local)
	case s.Persistence == "":
		return fmt.Errorf("persistence: \"\" is not accepted; use none, aof-no, aof-everysec or aof-always")
	case s.Workers < 1 || s.Workers > 10_000:
		return fmt.Errorf("workers: %d is not accepted; use 1..10000 per client", s.Workers)
	case s.Keys < 1 || s.Keys > 10_000_000:
		return fmt.Errorf("keys: %d is not accepted; use 1..10000000", s.Keys)
	}
	if _, err := s.Settings.ValidateInput(); err != nil {
		return err
	}
	return s.validateOwn()
}

// validateOwn checks the fields chaos adds to plan's.
func (s Settings) validateOwn() error {
	switch {
	case s.Clients < 1 || s.Clients > 64:
		return fmt.Errorf("clients: %d is not accepted; use 1..64", s.Clients)
	case !slices.Contains(ClientModes, s.ClientMode):
		return fmt.Errorf("client_mode: %q is not accepted; use goroutines or processes", s.ClientMode)
	case s.MinAcquisitions < 0:
		return fmt.Errorf("min_acquisitions: %d is not accepted; use 0 (no minimum) or a count such as 10", s.MinAcquisitions)
	case s.Acquisitions < 0:
		return fmt.Errorf("acquisitions: %d is not accepted; use 0 (run for duration) or a count", s.Acquisitions)
	}
	return nil
}

// settingNames are the YAML (and, with "-", flag) names of a chaos cell's
// settings.
func settingNames() map[string]bool {
	known := yamlNames(reflect.TypeOf(Settings{}))
	for _, n := range SharedSettings {
		known[n] = true
	}
	return known
}

// MarshalJSON writes the settings chaos takes (as in YAML), and "masters"
// = local too: manifests written before chaos took plan's settings had the
// count under that key, and their readers keep working.
func (s Settings) MarshalJSON() ([]byte, error) {
	type plain Settings // no MarshalJSON: the fields, plan's inlined
	b, err := json.Marshal(plain(s))
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	known := settingNames()
	for k := range m {
		if !known[k] {
			delete(m, k)
		}
	}
	m["masters"] = json.RawMessage(strconv.Itoa(s.Local))
	return json.Marshal(m)
}

// Warnings are settings that work but may make the checkers report a
// failure the faults did not cause.
func (s Settings) Warnings() []string {
	longest := time.Duration(s.Hold)
	switch s.HoldDist {
	case "uniform":
		longest *= 2
	case "exponential", "exp":
		longest *= 5 // past the 99th percentile
	}
	if s.Hold > 0 && longest >= time.Duration(s.TTL)-time.Duration(s.Timeout) && !s.CheckValidity {
		return []string{fmt.Sprintf("holds reach %v (hold %v, %s) against ttl %v: some writes land after the lock expired, "+
			"so lost updates can appear without any fault; shorten the hold or set check_validity", longest, s.Hold, s.HoldDist, s.TTL)}
	}
	return nil
}

// Metrics an expectation can name.
var Metrics = []string{"violations", "lost_updates", "stale_writes_rejected", "acquisitions",
	"availability_attempts", "availability_time", "max_concurrent_holders", "probe_violations"}

// Expectation is a claim a cell must show, such as violations >0.
type Expectation struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"`
}

func (e Expectation) String() string {
	return e.Metric + " " + e.Op + strconv.FormatFloat(e.Value, 'g', -1, 64)
}

var condRE = regexp.MustCompile(`^\s*(>=|<=|==|=|>|<)?\s*([0-9]+(?:\.[0-9]+)?)\s*$`)

// ParseExpectation reads a condition such as ">0", "0", ">=100000" or "<=0.5".
func ParseExpectation(metric, cond string) (Expectation, error) {
	if !slices.Contains(Metrics, metric) {
		return Expectation{}, fmt.Errorf("expect: %q is not a metric; use one of %s", metric, strings.Join(Metrics, ", "))
	}
	m := condRE.FindStringSubmatch(cond)
	if m == nil {
		return Expectation{}, fmt.Errorf("expect: %s: %q is not accepted; use a number with an optional >, >=, <, <= or = before it, such as \">0\" or 0", metric, cond)
	}
	op := m[1]
	if op == "" || op == "=" {
		op = "=="
	}
	v, _ := strconv.ParseFloat(m[2], 64)
	return Expectation{Metric: metric, Op: op, Value: v}, nil
}

// Holds reports whether v meets the expectation.
func (e Expectation) Holds(v float64) bool {
	switch e.Op {
	case ">":
		return v > e.Value
	case ">=":
		return v >= e.Value
	case "<":
		return v < e.Value
	case "<=":
		return v <= e.Value
	}
	return math.Abs(v-e.Value) < 1e-9
}

// Cell is one run of a scenario: settings, a fault schedule, expectations.
type Cell struct {
	Index     int
	Name      string
	ID        string            // file stem: NNN-name
	Overrides map[string]string // the settings this cell changed (its "axes")
	Settings  Settings
	Faults    []faults.Spec
	Expect    []Expectation
}

// Scenario is a chaos scenario file.
type Scenario struct {
	Name        string
	Description string
	Settings    Settings
	Cells       []Cell
	MetricsAddr string // live metrics endpoint, HOST:PORT ("" = off)
}

// The YAML shapes. Cells decode their settings key by key over the
// scenario's, so an error names its line.
type scenarioYAML struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Settings    yaml.Node         `yaml:"settings"`
	Faults      []yaml.Node       `yaml:"faults"`
	Expect      map[string]string `yaml:"expect"`
	Cells       []cellYAML        `yaml:"cells"`
	MetricsAddr string            `yaml:"metrics_addr"`
}

type cellYAML struct {
	Name     string            `yaml:"name"`
	Settings yaml.Node         `yaml:"settings"`
	Faults   *[]yaml.Node      `yaml:"faults"` // nil: the scenario's faults
	Expect   map[string]string `yaml:"expect"` // nil: the scenario's
}

// FaultYAML is one fault as written in a scenario or a --fault flag. Its
// targets are indices into the cell's masters and clients (from 0).
type FaultYAML struct {
	At          plan.Duration `yaml:"at"`
	Kind        string        `yaml:"kind"`
	MasterIndex []int         `yaml:"master_index"`
	ClientIndex []int         `yaml:"client_index"`
	For         plan.Duration `yaml:"for"`
	Restart     string        `yaml:"restart"`
	Latency     plan.Duration `yaml:"latency"`
	Jitter      plan.Duration `yaml:"jitter"`
	By          plan.Duration `yaml:"by"`
}

// oldFaultFields are the names fault targets had (masters and clients,
// which name an address list and a count in settings): still accepted.
var oldFaultFields = map[string]string{"masters": "master_index", "clients": "client_index"}

// fieldsOf says which fault fields each kind uses (besides at and kind).
var fieldsOf = map[faults.Kind][]string{
	faults.Crash:     {"master_index", "restart"},
	faults.Partition: {"master_index", "client_index", "for"},
	faults.Latency:   {"master_index", "client_index", "for", "latency", "jitter"},
	faults.Reset:     {"master_index", "client_index", "for"},
	faults.Pause:     {"client_index", "for"},
	faults.ClockJump: {"master_index", "by"},
}

// Load reads a scenario file, or a shipped scenario by name.
func Load(name string) (*Scenario, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		if sb, ok := Shipped(name); ok {
			return Parse(name, sb)
		}
		return nil, fmt.Errorf("config: %s: no such file or shipped chaos scenario (shipped: %s)", name, strings.Join(ShippedNames(), ", "))
	}
	return Parse(name, b)
}

// Parse parses a scenario; file names it in errors. Unknown keys, wrong
// types and bad values are errors naming the line and field.
func Parse(file string, b []byte) (*Scenario, error) {
	wrap := func(err error) error { return fmt.Errorf("config: %s: %w", file, err) }
	var y scenarioYAML
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil {
		return nil, wrap(fmt.Errorf("%s", plan.CleanYAMLError(err)))
	}
	sc := &Scenario{Name: y.Name, Description: strings.TrimSpace(y.Description), Settings: DefaultSettings(), MetricsAddr: y.MetricsAddr}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(file), ".yaml")
	}
	if err := decodeSettings(&sc.Settings, &y.Settings, "settings"); err != nil {
		return nil, wrap(err)
	}
	if len(y.Cells) == 0 {
		y.Cells = []cellYAML{{Name: sc.Name}}
	}
	seen := map[string]bool{}
	for i, cy := range y.Cells {
		c, err := parseCell(i, cy, &y, sc.Settings, seen)
		if err != nil {
			return nil, wrap(err)
		}
		sc.Cells = append(sc.Cells, c)
	}
	return sc, nil
}

// parseCell is cell i: the scenario's settings with the cell's laid over
// them, its faults and expectations (or the scenario's), checked together.
// seen holds the names of the cells before it.
func parseCell(i int, cy cellYAML, y *scenarioYAML, base Settings, seen map[string]bool) (Cell, error) {
	where := fmt.Sprintf("cells[%d]", i)
	c := Cell{Index: i, Name: cy.Name, Settings: base, Overrides: map[string]string{}}
	if c.Name == "" {
		c.Name = fmt.Sprintf("cell-%d", i)
	}
	if seen[c.Name] {
		return c, fmt.Errorf("%s.name: %q is used twice; give each cell its own name", where, c.Name)
	}
	seen[c.Name] = true
	c.ID = fmt.Sprintf("%03d-%s", i, fileSafe.ReplaceAllString(c.Name, "_"))
	if err := decodeSettings(&c.Settings, &cy.Settings, where+".settings"); err != nil {
		return c, err
	}
	if cy.Settings.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(cy.Settings.Content); j += 2 {
			c.Overrides[settingName(cy.Settings.Content[j].Value)] = cy.Settings.Content[j+1].Value
		}
	}
	fs, fwhere := y.Faults, "faults"
	if cy.Faults != nil {
		fs, fwhere = *cy.Faults, where+".faults"
	}
	for j := range fs {
		spec, err := decodeFault(&fs[j], fmt.Sprintf("%s[%d]", fwhere, j))
		if err != nil {
			return c, err
		}
		c.Faults = append(c.Faults, spec)
	}
	ex := y.Expect
	if cy.Expect != nil {
		ex = cy.Expect
	}
	for _, k := range sortedKeys(ex) {
		e, err := ParseExpectation(k, ex[k])
		if err != nil {
			return c, fmt.Errorf("%s.%w", where, err)
		}
		c.Expect = append(c.Expect, e)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s (%s): %w", where, c.Name, err)
	}
	return c, nil
}

// decodeSettings lays a settings mapping over s, one key at a time so that
// an unknown key or a wrong type names its line.
func decodeSettings(s *Settings, n *yaml.Node, where string) error {
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s: want a mapping of setting: value", n.Line, where)
	}
	known := settingNames()
	seen := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := settingName(k.Value)
		if !known[name] {
			return fmt.Errorf("line %d: %s: %q is not a setting; use one of %s", k.Line, where, k.Value, strings.Join(sortedKeys(known), ", "))
		}
		if prev, twice := seen[name]; twice {
			return fmt.Errorf("line %d: %s.%s: given twice (as %s and %s; %s is its old name)", k.Line, where, name, prev, k.Value, oldName(name))
		}
		seen[name] = k.Value
		if name != k.Value && v.ShortTag() != "!!int" {
			// masters is addresses in run and sweep: one given here is told so.
			return fmt.Errorf("line %d: %s.%s: chaos starts its own masters; use local: N (how many)", k.Line, where, k.Value)
		}
		if err := plan.CheckWholeNumber(reflect.TypeOf(*s), name, v); err != nil {
			return fmt.Errorf("line %d: %s.%s: %w", v.Line, where, k.Value, err)
		}
		key := *k
		key.Value = name
		one := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{&key, v}}
		if err := one.Decode(s); err != nil {
			return fmt.Errorf("line %d: %s.%s: %s", v.Line, where, k.Value, plan.CleanYAMLValueError(err))
		}
	}
	return nil
}

// settingName is the current name of a setting written under an old one.
func settingName(name string) string {
	if n, ok := deprecatedNames[name]; ok {
		return n
	}
	return name
}

// oldName is the deprecated name of a setting.
func oldName(name string) string {
	for old, n := range deprecatedNames {
		if n == name {
			return old
		}
	}
	return name
}

func decodeFault(n *yaml.Node, where string) (faults.Spec, error) {
	if n.Kind != yaml.MappingNode {
		return faults.Spec{}, fmt.Errorf("line %d: %s: want a mapping such as {at: 2s, kind: crash, master_index: [1]}", n.Line, where)
	}
	known := yamlNames(reflect.TypeOf(FaultYAML{}))
	var f FaultYAML
	set := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := *k
		if nw, ok := oldFaultFields[k.Value]; ok {
			key.Value = nw
		}
		if !known[key.Value] {
			return faults.Spec{}, fmt.Errorf("line %d: %s: %q is not a fault field; use one of %s", k.Line, where, k.Value, strings.Join(sortedKeys(known), ", "))
		}
		if _, twice := set[key.Value]; twice {
			return faults.Spec{}, fmt.Errorf("line %d: %s.%s: given twice (masters and clients are the old names of master_index and client_index)", k.Line, where, key.Value)
		}
		if err := plan.CheckWholeNumber(reflect.TypeOf(f), key.Value, v); err != nil {
			return faults.Spec{}, fmt.Errorf("line %d: %s.%s: %w", v.Line, where, k.Value, err)
		}
		one := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{&key, v}}
		if err := one.Decode(&f); err != nil {
			return faults.Spec{}, fmt.Errorf("line %d: %s.%s: %s", v.Line, where, k.Value, plan.CleanYAMLValueError(err))
		}
		set[key.Value] = k.Line
	}
	spec, err := f.Spec(set)
	if err != nil {
		return faults.Spec{}, fmt.Errorf("line %d: %s.%w", n.Line, where, err)
	}
	return spec, nil
}

// Spec checks the fault on its own (not against a cell) and converts it;
// set holds the fields that were written.
func (f FaultYAML) Spec(set map[string]int) (faults.Spec, error) {
	kind := faults.Kind(f.Kind)
	allowed, ok := fieldsOf[kind]
	if !ok {
		names := make([]string, len(faults.Kinds))
		for i, k := range faults.Kinds {
			names[i] = string(k)
		}
		return faults.Spec{}, fmt.Errorf("kind: %q is not accepted; use %s", f.Kind, strings.Join(names, ", "))
	}
	for field := range set {
		if field != "at" && field != "kind" && !slices.Contains(allowed, field) {
			return faults.Spec{}, fmt.Errorf("%s: not used by %s; it takes at, %s", field, kind, strings.Join(allowed, ", "))
		}
	}
	s := faults.Spec{At: time.Duration(f.At), Kind: kind, Masters: f.MasterIndex, Clients: f.ClientIndex, For: time.Duration(f.For),
		Restart: f.Restart, Latency: time.Duration(f.Latency), Jitter: time.Duration(f.Jitter), By: time.Duration(f.By)}
	switch {
	case s.At < 0:
		return s, fmt.Errorf("at: %v is not accepted; use 0 or a positive duration", f.At)
	case s.For < 0:
		return s, fmt.Errorf("for: %v is not accepted; use a positive duration (or leave it out: until the end)", f.For)
	case kind == faults.Latency && s.Latency <= 0:
		return s, fmt.Errorf("latency: %v is not accepted; use a positive duration such as 20ms", f.Latency)
	case kind == faults.Latency && (s.Jitter < 0 || s.Jitter > s.Latency):
		return s, fmt.Errorf("jitter: %v is not accepted; use 0..latency (%v)", f.Jitter, f.Latency)
	case kind == faults.ClockJump && s.By == 0:
		return s, fmt.Errorf("by: is needed; use how far the clock jumps, such as 5s (negative: backwards)")
	case kind == faults.Crash && len(s.Masters) == 0:
		return s, fmt.Errorf("master_index: is needed; list the masters to crash by index from 0, such as [1]")
	case kind == faults.ClockJump && len(s.Masters) == 0:
		return s, fmt.Errorf("master_index: is needed; list the masters whose clock jumps by index from 0, such as [1]")
	}
	if kind == faults.Crash {
		if _, err := s.RestartDelay(); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Validate checks the cell's settings and faults together.
func (c Cell) Validate() error {
	if err := c.Settings.Validate(); err != nil {
		return err
	}
	d := time.Duration(c.Settings.Duration)
	for j, f := range c.Faults {
		where := fmt.Sprintf("faults[%d]", j)
		if f.At >= d {
			return fmt.Errorf("%s.at: %v is not accepted; use a time before the end of the cell (duration %v)", where, f.At, d)
		}
		for _, m := range f.Masters {
			if m < 0 || m >= c.Settings.Local {
				return fmt.Errorf("%s.master_index: %d is not accepted; use 0..%d (%d local masters)", where, m, c.Settings.Local-1, c.Settings.Local)
			}
		}
		for _, cl := range f.Clients {
			if cl < 0 || cl >= c.Settings.Clients {
				return fmt.Errorf("%s.client_index: %d is not accepted; use 0..%d (%d clients)", where, cl, c.Settings.Clients-1, c.Settings.Clients)
			}
		}
	}
	return nil
}

// NeedsNetwork reports whether the cell has network faults (clients then
// reach the masters through proxies).
func (c Cell) NeedsNetwork() bool {
	for _, f := range c.Faults {
		if f.Kind == faults.Partition || f.Kind == faults.Latency || f.Kind == faults.Reset {
			return true
		}
	}
	return false
}

// ClockMasters are the masters that run under a fake clock.
func (c Cell) ClockMasters() map[int]bool {
	out := map[int]bool{}
	for _, f := range c.Faults {
		if f.Kind == faults.ClockJump {
			for _, m := range f.Masters {
				out[m] = true
			}
		}
	}
	return out
}

// ParseFaultFlag reads a --fault value: a kind, then field=value pairs,
// e.g. "crash at=2s master_index=1 restart=immediate" or
// "partition at=0s client_index=0 master_index=2,3 for=5s" (masters= and
// clients=, the old names, still work).
func ParseFaultFlag(s string) (faults.Spec, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return faults.Spec{}, fmt.Errorf("fault: empty; use KIND at=DURATION field=value ..., such as \"crash at=2s master_index=1\"")
	}
	// The value as quoted back in errors: a master address typed into it
	// by mistake keeps its password out of the message.
	shown := make([]string, len(fields))
	for i, f := range fields {
		shown[i] = engine.RedactURL(f)
	}
	var doc strings.Builder
	fmt.Fprintf(&doc, "kind: %q\n", fields[0])
	for i, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return faults.Spec{}, fmt.Errorf("fault: %q is not field=value in %q", shown[i+1], strings.Join(shown, " "))
		}
		if _, old := oldFaultFields[k]; old || k == "master_index" || k == "client_index" {
			v = "[" + v + "]"
		} else {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&doc, "%s: %s\n", k, v)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc.String()), &n); err != nil || len(n.Content) == 0 {
		return faults.Spec{}, fmt.Errorf("fault: %q cannot be read; use KIND at=DURATION field=value ...", strings.Join(shown, " "))
	}
	spec, err := decodeFault(n.Content[0], "fault")
	if err != nil {
		// The line numbers of a one-flag document mean nothing.
		msg := lineNumber.ReplaceAllString(err.Error(), "")
		return faults.Spec{}, fmt.Errorf("%s (in --fault %q)", msg, strings.Join(shown, " "))
	}
	return spec, nil
}

// ParseExpectFlag reads an --expect value such as "violations>0".
func ParseExpectFlag(s string) (Expectation, error) {
	i := strings.IndexAny(s, "<>=")
	if i <= 0 {
		return Expectation{}, fmt.Errorf("expect: %q is not accepted; use METRIC OP VALUE such as violations>0 or lost_updates=0", s)
	}
	return ParseExpectation(strings.TrimSpace(s[:i]), s[i:])
}

var lineNumber = regexp.MustCompile(`line \d+: `)

var fileSafe = regexp.MustCompile(`[^A-Za-z0-9=,._-]+`)

func yamlNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" {
			out[tag] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
