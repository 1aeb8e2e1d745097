package plan

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Cell is one cell of a scenario, resolved: its settings and everything
// the runner needs from them, derived once here (Resolved), its faults and
// expectations.
type Cell struct {
	Index int
	ID    string            // file stem: 003-persistence=none,mode=sequential, or 000-name
	Label string            // persistence=none mode=sequential, or the name
	Name  string            // the named cell it comes from ("" = none)
	Axes  map[string]string // axis → value (a named cell: "cell" and its overrides too)
	// Faulty: a fault scenario's cell (its own servers, clients, faults
	// and a protected resource).
	Faulty   bool
	Settings Settings
	Faults   []Fault
	Expect   []Expectation
	Resolved
}

// parseAxes reads the matrix: setting → values, in file order.
func (sc *Scenario) parseAxes(m yaml.Node) error {
	if m.Kind == 0 {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: matrix: want a mapping of setting: [values]", m.Line)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		ax, err := sc.parseAxis(m.Content[i], m.Content[i+1])
		if err != nil {
			return err
		}
		sc.axes = append(sc.axes, ax)
	}
	return nil
}

// parseAxis reads one axis, type-checking each value with its line.
func (sc *Scenario) parseAxis(k, v *yaml.Node) (Axis, error) {
	ax := Axis{Name: settingAlias(k.Value), As: k.Value}
	if err := sc.kind().check(ax.Name, nil); err != nil {
		return ax, fmt.Errorf("line %d: matrix: %w", k.Line, asGiven(k.Value, ax.Name, err))
	}
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return ax, fmt.Errorf("line %d: matrix: %s: want a non-empty list of values", v.Line, k.Value)
	}
	for _, item := range v.Content {
		if item.Kind != yaml.ScalarNode {
			return ax, fmt.Errorf("line %d: matrix: %s: want scalar values", item.Line, k.Value)
		}
		var buf bytes.Buffer
		_ = yaml.NewEncoder(&buf).Encode(item)
		ax.Values = append(ax.Values, strings.TrimSpace(buf.String()))
		var probe Settings
		if err := decodeOne(&probe, ax.Name, item); err != nil {
			return ax, fmt.Errorf("line %d: matrix: %s: %w", item.Line, k.Value, err)
		}
	}
	if slices.ContainsFunc(sc.axes, func(a Axis) bool { return a.Name == ax.Name }) {
		return ax, fmt.Errorf("line %d: matrix: %s is listed twice", k.Line, k.Value)
	}
	return ax, nil
}

// Axes are the matrix axes in file order.
func (sc *Scenario) Axes() []Axis { return sc.axes }

// SetAxes replaces the matrix (tests: a huge one without a file).
func (sc *Scenario) SetAxes(a []Axis) { sc.axes = a }

// MaxCells bounds a scenario's matrix unless the user insists (--force):
// past it the expansion alone takes seconds and gigabytes, and the run days.
const MaxCells = 10_000

// CellCount is how many cells the scenario expands to, by arithmetic (the
// named cells times the product of the axes' lengths, saturating at
// math.MaxInt), so that a huge matrix is judged before anything is expanded.
func (sc *Scenario) CellCount() int {
	n := max(len(sc.named), 1)
	for _, ax := range sc.axes {
		k := len(ax.Values)
		if k != 0 && n > math.MaxInt/k {
			return math.MaxInt
		}
		n *= k
	}
	return n
}

// CheckSize refuses more than MaxCells cells unless force, with the count
// and the axes that make it.
func (sc *Scenario) CheckSize(force bool) error {
	n := sc.CellCount()
	if n <= MaxCells || force {
		return nil
	}
	var parts []string
	if len(sc.named) > 1 {
		parts = append(parts, fmt.Sprintf("cells %d", len(sc.named)))
	}
	for _, ax := range sc.axes {
		parts = append(parts, fmt.Sprintf("%s %d", ax.Name, len(ax.Values)))
	}
	count := strconv.Itoa(n)
	if n == math.MaxInt {
		count = "more than " + strconv.Itoa(math.MaxInt)
	}
	return fmt.Errorf("matrix: %s cells (%s) is more than %d; use fewer values, or --force to run them all",
		count, strings.Join(parts, " × "), MaxCells)
}

// Cells expands the scenario: every named cell (its settings over the
// scenario's, then the flags) times the matrix, numbered and resolved.
func (sc *Scenario) Cells() ([]Cell, error) {
	named := sc.named
	if len(named) == 0 {
		named = []namedCell{{}}
	}
	per := 1 // cells per named cell
	for _, ax := range sc.axes {
		per *= len(ax.Values)
	}
	var cells []Cell
	for _, nc := range named {
		part, err := sc.expandNamed(nc)
		if err != nil {
			return nil, err
		}
		for j := range part {
			if err := part[j].finish(nc.pos*per+j, sc.axes); err != nil {
				return nil, err
			}
		}
		cells = append(cells, part...)
	}
	return cells, nil
}

// expandNamed is one named cell times the matrix.
func (sc *Scenario) expandNamed(nc namedCell) ([]Cell, error) {
	base := Cell{Name: nc.name, Faulty: sc.Faulty, Settings: sc.Settings, Faults: sc.faults, Expect: sc.expect, Axes: map[string]string{}}
	base.Settings.cloneSlices()
	if nc.ownFault {
		base.Faults = nc.faults
	}
	if nc.ownExp {
		base.Expect = nc.expect
	}
	if nc.settings != nil {
		if err := sc.decodeSettings(&base.Settings, nc.settings, fmt.Sprintf("cells[%d].settings", nc.pos)); err != nil {
			return nil, err
		}
		base.Axes = sc.overrides(nc.settings)
	}
	if nc.name != "" {
		base.Axes["cell"] = nc.name
	}
	if sc.flags != nil {
		if err := sc.flags(&base.Settings); err != nil {
			return nil, err
		}
	}
	return expandAxes(base, sc.axes)
}

// overrides are a named cell's settings as written, by setting name (a
// fault scenario's old masters: N as local).
func (sc *Scenario) overrides(n *yaml.Node) map[string]string {
	out := map[string]string{}
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, v := n.Content[j], n.Content[j+1]
			out[sc.kind().settingName(k.Value, v.ShortTag() == "!!int")] = v.Value
		}
	}
	return out
}

// expandAxes is base at every point of the matrix.
func expandAxes(base Cell, axes []Axis) ([]Cell, error) {
	cells := []Cell{base}
	for _, ax := range axes {
		var next []Cell
		for _, c := range cells {
			for _, v := range ax.Values {
				nc := c
				nc.Settings.cloneSlices()
				nc.Axes = map[string]string{}
				for k, x := range c.Axes {
					nc.Axes[k] = x
				}
				if err := applyAxis(&nc.Settings, ax, v); err != nil {
					return nil, fmt.Errorf("matrix: %s: %s", ax.Name, CleanYAMLError(err))
				}
				nc.Axes[ax.Name] = v
				next = append(next, nc)
			}
		}
		cells = next
	}
	return cells, nil
}

// cloneSlices gives s slices of its own, so that laying a flag or an axis
// over one cell's settings cannot reach another's.
func (s *Settings) cloneSlices() {
	s.Masters, s.SentinelAddrs = slices.Clone(s.Masters), slices.Clone(s.SentinelAddrs)
	s.ReplicaPriority, s.Servers = slices.Clone(s.ReplicaPriority), slices.Clone(s.Servers)
	s.Given = maps.Clone(s.Given)
}

// Renumber makes the cell the run's i-th, its ID's number with it: for
// cells of another scenario laid after this one's (lockbench choose's
// price cells after its fault cells).
func (c *Cell) Renumber(i int) {
	c.Index = i
	c.ID = fmt.Sprintf("%03d", i) + strings.TrimLeft(c.ID, "0123456789")
}

// finish numbers and names cell i and resolves it.
func (c *Cell) finish(i int, axes []Axis) error {
	c.Index = i
	var parts []string
	for _, ax := range axes {
		parts = append(parts, ax.Name+"="+c.Axes[ax.Name])
	}
	c.Label = strings.Join(parts, " ")
	c.ID = fmt.Sprintf("%03d", i)
	stem := fileSafe.ReplaceAllString(strings.Join(parts, ","), "_")
	switch {
	case c.Name != "":
		c.ID += "-" + fileSafe.ReplaceAllString(c.Name, "_")
		c.Label = strings.TrimSpace(c.Name + " " + c.Label)
		if stem != "" {
			c.ID += "," + stem
		}
	case stem != "":
		c.ID += "-" + stem
	default:
		c.Label = "single cell"
	}
	c.Settings.serversAsMasters()
	var err error
	c.Resolved, err = c.resolve()
	return err
}

var fileSafe = regexp.MustCompile(`[^A-Za-z0-9=,._-]+`)

// EstimatedDuration is the sum of warm-ups and measured windows, plus a
// guess of a few seconds per server set started (more where the topology
// says its servers start slower: SlowStart); a fault
// cell's MastersKey is its own, so it starts a set.
func EstimatedDuration(cells []Cell) time.Duration {
	var d time.Duration
	prev := ""
	for _, c := range cells {
		d += time.Duration(c.Settings.Warmup + c.Settings.Duration)
		if k := c.MastersKey(); k != prev {
			d += 2 * time.Second
			d += c.Settings.extraStart()
			prev = k
		}
	}
	return d
}

// MaxRepeat bounds --repeat: more is a soak, not a spread.
const MaxRepeat = 100

// ValidateRepeat checks a repeat count.
func ValidateRepeat(n int) error {
	if n < 1 || n > MaxRepeat {
		return fmt.Errorf("repeat: %d is not accepted; use 1..%d (times each cell is measured; 3 or more give a spread, 4+4 can show a difference at p<0.05 in compare)", n, MaxRepeat)
	}
	return nil
}

// RepeatsNeedFreshMasters: local masters with persistence keep state
// between cells (the AOF file), so a repeat run on them after an earlier
// repeat of the same cell would not start where the first one did.
func RepeatsNeedFreshMasters(s Settings) bool {
	return len(s.Masters) == 0 && s.Persistence != "" && s.Persistence != "none"
}

// OwnServers says the cell gets servers of its own, which no other cell
// shares: a fault cell's (it crashes them), with its protected resource.
func (c Cell) OwnServers() bool { return c.kind().ownServers }

// MastersKey says which cells can share one set of masters: a change of
// key means new local masters (or new persistence on external ones). A
// fault cell's servers are its own (it crashes them).
func (c Cell) MastersKey() string {
	s := c.Settings
	if c.OwnServers() {
		return "cell " + c.ID
	}
	return s.Service().ServersKey(s)
}

// applyAxis sets one YAML-named field from a YAML scalar, type-checked by
// the YAML decoder itself.
func applyAxis(s *Settings, ax Axis, value string) error {
	name := ax.Name
	if name == "servers" && !strings.HasPrefix(strings.TrimSpace(value), "[") {
		value = "[" + strconv.Quote(value) + "]" // one server, as a URL is given
	}
	dec := yaml.NewDecoder(strings.NewReader(name + ": " + value + "\n"))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return err
	}
	s.MarkGiven(settingAlias(name))
	if _, own := serversAlias(ax.As); own {
		s.MarkGiven(ax.As) // by the service's own name too: another topology refuses it
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// CleanYAMLError keeps the YAML decoder's message but drops its prefix. The
// decoder quotes the start of a value it cannot use (`redis:/...`); a value
// holding ":" or "@" may be a master URL with a password, so it is hidden.
func CleanYAMLError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: unmarshal errors:\n")
	s = strings.TrimPrefix(s, "yaml: ")
	s = quotedValue.ReplaceAllStringFunc(s, func(q string) string {
		if strings.ContainsAny(q, ":@") {
			return "`(value hidden)`"
		}
		return q
	})
	return acceptedTypes(strings.Join(strings.Fields(s), " "))
}

var quotedValue = regexp.MustCompile("`[^`]*`")
