package plan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"lockbench/configs"
	"lockbench/results"
)

// Scenario is a scenario file, of either kind: a benchmark (settings, a
// matrix of axes, named cells, repeat, report, thresholds, expectations)
// or a fault scenario, which also has faults, clients, a protected
// resource and fencing. A file with faults: or a fault scenario's own
// setting (clients:, fencing:, …) anywhere is a fault scenario; expect:
// alone is not. `lockbench chaos` reads every file as one.
type Scenario struct {
	Name        string
	Description string
	Settings    Settings // the fixed settings, flags laid over them
	Report      Report
	Thresholds  []string
	// Repeat measures every cell this many times, interleaved (A, B, C,
	// A, B, C, …) so that slow drift of the machine spreads over all cells.
	Repeat int
	// MetricsAddr serves live metrics on HOST:PORT while it runs ("" = off).
	MetricsAddr string
	// Faulty: a fault scenario, whose cells start their own servers and
	// clients, inject faults and judge a protected resource.
	Faulty bool

	axes   []Axis
	named  []namedCell // cells: named overrides; none = one unnamed cell
	faults []Fault     // the scenario's; a named cell may replace them
	expect []Expectation
	flags  func(*Settings) error // laid over every cell's own settings
}

// namedCell is one entry of cells: its settings (laid over the scenario's
// at expansion, so that flags still win), faults and expectations (nil:
// the scenario's).
type namedCell struct {
	pos      int // its place in the file: a selected cell keeps its number
	name     string
	settings *yaml.Node
	faults   []Fault
	expect   []Expectation
	ownFault bool
	ownExp   bool
}

// Report holds the report stage's settings of a scenario.
type Report = results.ReportSettings

// Axis is one swept setting and its values, as YAML scalars.
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	// As is the name it was given as, when another (a service's own name
	// for servers).
	As string `json:"-"`
}

// scenarioYAML is the file's shape; settings and cells are decoded key by
// key so that an error names its line.
type scenarioYAML struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Settings    yaml.Node         `yaml:"settings"`
	Matrix      yaml.Node         `yaml:"matrix"` // ordered: the first axis varies slowest
	Cells       []cellYAML        `yaml:"cells"`
	Repeat      int               `yaml:"repeat"`
	Report      Report            `yaml:"report"`
	Thresholds  []string          `yaml:"thresholds"`
	MetricsAddr string            `yaml:"metrics_addr"`
	Faults      []yaml.Node       `yaml:"faults"`
	Expect      map[string]string `yaml:"expect"`
}

type cellYAML struct {
	Name     string            `yaml:"name"`
	Settings yaml.Node         `yaml:"settings"`
	Faults   *[]yaml.Node      `yaml:"faults"` // nil: the scenario's faults
	Expect   map[string]string `yaml:"expect"` // nil: the scenario's
}

// Load reads a scenario file, or a shipped scenario by name. A directory
// is never a scenario file (a results folder may share a shipped name).
func Load(name string, faulty bool) (*Scenario, error) {
	if fi, err := os.Stat(name); err != nil || fi.IsDir() {
		if b, ok := configs.Get(name); ok {
			return Parse(name, b, faulty)
		}
		return nil, fmt.Errorf("config: %s: no such file or shipped scenario (shipped: %s; fault scenarios: %s)",
			name, strings.Join(configs.Names(), ", "), strings.Join(configs.FaultNames(), ", "))
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	return Parse(name, b, faulty)
}

// Parse parses a scenario; file names it in errors. faulty reads it as a
// fault scenario whatever it holds. Unknown keys, wrong types and bad
// values are errors naming the line and field; so is a fault scenario's
// key in a benchmark scenario.
func Parse(file string, b []byte, faulty bool) (*Scenario, error) {
	sc, err := parse(file, b, faulty)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", file, err)
	}
	return sc, nil
}

func parse(file string, b []byte, faulty bool) (*Scenario, error) {
	var y scenarioYAML
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil && err.Error() != "EOF" {
		return nil, fmt.Errorf("%s", CleanYAMLError(err))
	}
	sc := &Scenario{Name: y.Name, Description: strings.TrimSpace(y.Description), Report: y.Report,
		Thresholds: y.Thresholds, Repeat: y.Repeat, MetricsAddr: y.MetricsAddr, Faulty: faulty || y.faulty()}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(baseName(file), ".yaml")
	}
	sc.Settings = sc.kind().defaults()
	if err := sc.decodeSettings(&sc.Settings, &y.Settings, "settings"); err != nil {
		return nil, err
	}
	if err := sc.parseAxes(y.Matrix); err != nil {
		return nil, err
	}
	if err := sc.parseFaultsAndCells(&y); err != nil {
		return nil, err
	}
	if sc.Repeat == 0 {
		sc.Repeat = 1
	}
	if err := sc.checkRepeat(); err != nil {
		return nil, err
	}
	if r := sc.Report.SLOSuccess; r < 0 || r > 1 {
		return nil, fmt.Errorf("report: slo_success: %v is not accepted; use a ratio in (0, 1] such as 0.99", r)
	}
	return sc, sc.validateCells()
}

// checkRepeat: a repeat count in range. A fault cell's repeats are each
// judged on their own, on servers of their own; combined, they say how
// many were unsafe and the spread of what the checkers counted.
func (sc *Scenario) checkRepeat() error { return ValidateRepeat(sc.Repeat) }

// faulty: the file has faults somewhere (an empty faults: [] too, as in
// a cell: a control run without faults) or a setting only a fault
// scenario takes. Expectations do not decide: a benchmark may carry them.
func (y *scenarioYAML) faulty() bool {
	if y.Faults != nil || hasFaultSetting(&y.Settings) || hasFaultSetting(&y.Matrix) {
		return true
	}
	for _, c := range y.Cells {
		if c.Faults != nil || hasFaultSetting(&c.Settings) {
			return true
		}
	}
	return false
}

// hasFaultSetting: the mapping n has a key only a fault scenario takes.
func hasFaultSetting(n *yaml.Node) bool {
	for i := 0; n.Kind == yaml.MappingNode && i < len(n.Content); i += 2 {
		if scopeOf(settingAlias(n.Content[i].Value)) == faultOnly {
			return true
		}
	}
	return false
}

// parseFaultsAndCells reads the scenario's faults and expectations, then
// its named cells with theirs.
func (sc *Scenario) parseFaultsAndCells(y *scenarioYAML) error {
	var err error
	if sc.faults, err = decodeFaults(y.Faults, "faults"); err != nil {
		return err
	}
	if sc.expect, err = parseExpectations(y.Expect, ""); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, cy := range y.Cells {
		nc, err := sc.parseCell(i, cy, seen)
		if err != nil {
			return err
		}
		sc.named = append(sc.named, nc)
	}
	if sc.kind().alwaysNamed && len(sc.named) == 0 {
		// A fault scenario's cells are named: the one it has is the scenario.
		sc.named = []namedCell{{name: sc.Name}}
	}
	return nil
}

// parseCell reads cells[i]; seen holds the names before it.
func (sc *Scenario) parseCell(i int, cy cellYAML, seen map[string]bool) (namedCell, error) {
	where := fmt.Sprintf("cells[%d]", i)
	nc := namedCell{pos: i, name: cy.Name, settings: &cy.Settings}
	if nc.name == "" {
		nc.name = fmt.Sprintf("cell-%d", i)
	}
	if seen[nc.name] {
		return nc, fmt.Errorf("%s.name: %q is used twice; give each cell its own name", where, nc.name)
	}
	seen[nc.name] = true
	// Type-check the overrides now, with their lines.
	probe := sc.Settings
	probe.cloneSlices() // the probe's decoding must not touch the scenario's
	if err := sc.decodeSettings(&probe, nc.settings, where+".settings"); err != nil {
		return nc, err
	}
	var err error
	if cy.Faults != nil {
		nc.ownFault = true
		if nc.faults, err = decodeFaults(*cy.Faults, where+".faults"); err != nil {
			return nc, err
		}
	}
	if cy.Expect != nil {
		nc.ownExp = true
		if nc.expect, err = parseExpectations(cy.Expect, where+"."); err != nil {
			return nc, err
		}
	}
	return nc, nil
}

// validateCells checks every cell the file expands to (flags may still
// change them; the commands check again after).
func (sc *Scenario) validateCells() error {
	if sc.CellCount() > MaxCells {
		// Too many to expand here; the caller refuses it (CheckSize) or,
		// with --force, expands and validates every cell itself.
		return nil
	}
	cells, err := sc.Cells()
	if err != nil {
		return err
	}
	for _, c := range cells {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("cell %s: %w", c.Label, err)
		}
	}
	return nil
}

// decodeSettings lays a settings mapping over s, one key at a time so that
// an unknown key, a key of the other kind of scenario or a wrong type
// names its line.
func (sc *Scenario) decodeSettings(s *Settings, n *yaml.Node, where string) error {
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s: want a mapping of setting: value", n.Line, where)
	}
	seen := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, err := sc.settingKey(k, v, where, seen)
		if err != nil {
			return err
		}
		if err := decodeOne(s, name, v); err != nil {
			return fmt.Errorf("line %d: %s.%s: %w", v.Line, where, k.Value, err)
		}
		if _, own := serversAlias(k.Value); own {
			s.MarkGiven(k.Value) // by the service's own name too: another topology refuses it
		}
	}
	return nil
}

// settingKey is the setting a key names in this kind of scenario, or why
// it names none.
func (sc *Scenario) settingKey(k, v *yaml.Node, where string, seen map[string]string) (string, error) {
	name := sc.kind().settingName(k.Value, v.ShortTag() == "!!int")
	if prev, twice := seen[name]; twice {
		return "", fmt.Errorf("line %d: %s.%s: given twice (as %s and %s, one name of the other)", k.Line, where, name, prev, k.Value)
	}
	seen[name] = k.Value
	if err := sc.kind().check(name, v); err != nil {
		return "", fmt.Errorf("line %d: %s: %w", k.Line, where, asGiven(k.Value, name, err))
	}
	return name, nil
}

// decodeOne sets one setting from a YAML value.
func decodeOne(s *Settings, name string, v *yaml.Node) error {
	if err := CheckWholeNumber(reflect.TypeOf(*s), name, v); err != nil {
		return err
	}
	if name == "servers" && v.Kind == yaml.ScalarNode { // one server, as a URL is given
		v = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{v}}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}
	one := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, v}}
	if err := one.Decode(s); err != nil {
		return fmt.Errorf("%s", CleanYAMLValueError(err))
	}
	s.MarkGiven(name)
	return nil
}

// asGiven names the key as given when it is another name of the setting
// an error is about.
func asGiven(key, name string, err error) error {
	if key == name {
		return err
	}
	if rest, ok := strings.CutPrefix(err.Error(), name+":"); ok {
		return errors.New(key + ":" + rest)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// settingAliases are other names of settings, under which users know them
// (Redisson's lease time is the lock's TTL).
var settingAliases = map[string]string{"lease_time": "ttl"}

// settingAlias is the setting name names.
func settingAlias(name string) string {
	if a, ok := settingAliases[name]; ok {
		return a
	}
	a, _ := serversAlias(name)
	return a
}

// SettingNames are the YAML names of every setting.
func SettingNames() map[string]bool { return yamlNames(reflect.TypeOf(Settings{})) }
