package plan

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Sweep is a scenario file: fixed settings and matrix axes.
type Sweep struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Settings    Settings  `yaml:"settings"`
	Matrix      yaml.Node `yaml:"matrix"` // ordered: the first axis varies slowest
	Report      Report    `yaml:"report"`
	Thresholds  []string  `yaml:"thresholds"`
	// Repeat measures every cell this many times, interleaved (A, B, C,
	// A, B, C, …) so that slow drift of the machine spreads over all cells.
	Repeat int `yaml:"repeat"`
	// MetricsAddr serves live metrics on HOST:PORT while the sweep runs
	// ("" = off; --metrics-addr overrides it).
	MetricsAddr string `yaml:"metrics_addr"`

	axes []Axis
}

// Report holds the report stage's settings of a scenario.
type Report struct {
	SLOP99     Duration `yaml:"slo_p99" json:"slo_p99"`
	SLOSuccess float64  `yaml:"slo_success" json:"slo_success"`
	TargetRate float64  `yaml:"target_rate" json:"target_rate"`
}

// Axis is one swept setting and its values, as YAML scalars.
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Cell is one point of the matrix.
type Cell struct {
	Index    int
	ID       string            // file stem: 003-persistence=none,mode=sequential
	Label    string            // persistence=none mode=sequential
	Axes     map[string]string // axis → value
	Settings Settings
}

// LoadSweep reads a scenario file. Unknown keys, wrong types and unknown
// axes are errors naming the file, line and field.
func LoadSweep(path string) (*Sweep, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	return ParseSweep(path, b)
}

// ParseSweep parses a scenario; name is used in errors.
func ParseSweep(name string, b []byte) (*Sweep, error) {
	sw := &Sweep{Settings: Defaults()}
	// Settings first, one key at a time, so a type error names its field.
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("config: %s: %s", name, CleanYAMLError(err))
	}
	if err := checkSettingsTypes(doc); err != nil {
		return nil, fmt.Errorf("config: %s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(sw); err != nil {
		return nil, fmt.Errorf("config: %s: %s", name, CleanYAMLError(err))
	}
	if sw.Name == "" {
		sw.Name = strings.TrimSuffix(baseName(name), ".yaml")
	}
	if err := sw.parseAxes(name); err != nil {
		return nil, err
	}
	if sw.Repeat == 0 {
		sw.Repeat = 1
	}
	if err := ValidateRepeat(sw.Repeat); err != nil {
		return nil, fmt.Errorf("config: %s: %w", name, err)
	}
	if sw.CellCount() > MaxCells {
		// Too many to expand here; the caller refuses it (CheckSize) or,
		// with --force, expands and validates every cell itself.
		return sw, nil
	}
	cells, err := sw.Cells()
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", name, err)
	}
	for _, c := range cells {
		if _, err := c.Settings.ValidateInput(); err != nil {
			return nil, fmt.Errorf("config: %s: cell %s: %w", name, c.Label, err)
		}
	}
	return sw, nil
}

func (sw *Sweep) parseAxes(name string) error {
	m := sw.Matrix
	if m.Kind == 0 {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("config: %s: line %d: matrix: want a mapping of setting: [values]", name, m.Line)
	}
	known := yamlFieldNames()
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !known[k.Value] {
			return fmt.Errorf("config: %s: line %d: matrix: %q is not a setting; use one of %s", name, k.Line, k.Value, strings.Join(sortedKeys(known), ", "))
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return fmt.Errorf("config: %s: line %d: matrix: %s: want a non-empty list of values", name, v.Line, k.Value)
		}
		ax := Axis{Name: k.Value}
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				return fmt.Errorf("config: %s: line %d: matrix: %s: want scalar values", name, item.Line, k.Value)
			}
			var buf bytes.Buffer
			enc := yaml.NewEncoder(&buf)
			_ = enc.Encode(item)
			ax.Values = append(ax.Values, strings.TrimSpace(buf.String()))
			// Type-check the value now, with the line it came from.
			var probe Settings
			if err := CheckWholeNumber(reflect.TypeOf(probe), k.Value, item); err != nil {
				return fmt.Errorf("config: %s: line %d: matrix: %s: %w", name, item.Line, k.Value, err)
			}
			if err := applyAxis(&probe, ax.Name, ax.Values[len(ax.Values)-1]); err != nil {
				return fmt.Errorf("config: %s: line %d: matrix: %s: %s", name, item.Line, k.Value, CleanYAMLValueError(err))
			}
		}
		for _, a := range sw.axes {
			if a.Name == ax.Name {
				return fmt.Errorf("config: %s: line %d: matrix: %s is listed twice", name, k.Line, k.Value)
			}
		}
		sw.axes = append(sw.axes, ax)
	}
	return nil
}

// checkSettingsTypes decodes each key under settings on its own, so that
// "cannot unmarshal" errors say which setting and line.
func checkSettingsTypes(doc yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		if doc.Kind == 0 {
			return nil
		}
		return fmt.Errorf("line %d: want a mapping with name, description, settings, matrix, report, thresholds, repeat, metrics_addr", doc.Line)
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "settings" {
			continue
		}
		m := top.Content[i+1]
		if m.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: settings: want a mapping of setting: value", m.Line)
		}
		known := yamlFieldNames()
		for j := 0; j+1 < len(m.Content); j += 2 {
			k, v := m.Content[j], m.Content[j+1]
			if !known[k.Value] {
				return fmt.Errorf("line %d: settings: %q is not a setting; use one of %s", k.Line, k.Value, strings.Join(sortedKeys(known), ", "))
			}
			if k.Value == "masters" && v.ShortTag() == "!!int" {
				// chaos' old name for the count: here masters are addresses.
				return fmt.Errorf("line %d: settings: masters: a list of addresses (host:port, redis://…); to start %s local masters use local: %s", v.Line, v.Value, v.Value)
			}
			one := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, v}}
			var probe Settings
			if err := CheckWholeNumber(reflect.TypeOf(probe), k.Value, v); err != nil {
				return fmt.Errorf("line %d: settings: %s: %w", v.Line, k.Value, err)
			}
			if err := one.Decode(&probe); err != nil {
				return fmt.Errorf("line %d: settings: %s: %s", v.Line, k.Value, CleanYAMLValueError(err))
			}
		}
	}
	return nil
}

// Axes are the matrix axes in file order.
func (sw *Sweep) Axes() []Axis { return sw.axes }

// SetAxes replaces the matrix (tests and flag overrides).
func (sw *Sweep) SetAxes(a []Axis) { sw.axes = a }

// MaxCells bounds a sweep's matrix unless the user insists (--force): past
// it the expansion alone takes seconds and gigabytes, and the run days.
const MaxCells = 10_000

// CellCount is how many cells the matrix expands to, by arithmetic (the
// product of the axes' lengths, saturating at math.MaxInt), so that a huge
// matrix is judged before anything is expanded.
func (sw *Sweep) CellCount() int {
	n := 1
	for _, ax := range sw.axes {
		k := len(ax.Values)
		if k != 0 && n > math.MaxInt/k {
			return math.MaxInt
		}
		n *= k
	}
	return n
}

// CheckSize refuses a matrix of more than MaxCells cells unless force, with
// the count and the axes that make it.
func (sw *Sweep) CheckSize(force bool) error {
	n := sw.CellCount()
	if n <= MaxCells || force {
		return nil
	}
	var parts []string
	for _, ax := range sw.axes {
		parts = append(parts, fmt.Sprintf("%s %d", ax.Name, len(ax.Values)))
	}
	count := strconv.Itoa(n)
	if n == math.MaxInt {
		count = "more than " + strconv.Itoa(math.MaxInt)
	}
	return fmt.Errorf("matrix: %s cells (%s) is more than %d; use fewer values, or --force to run them all",
		count, strings.Join(parts, " × "), MaxCells)
}

// Cells expands the matrix over the fixed settings.
func (sw *Sweep) Cells() ([]Cell, error) {
	cells := []Cell{{Settings: sw.Settings, Axes: map[string]string{}}}
	for _, ax := range sw.axes {
		var next []Cell
		for _, c := range cells {
			for _, v := range ax.Values {
				nc := Cell{Settings: c.Settings, Axes: map[string]string{}}
				nc.Settings.Masters = append([]string(nil), c.Settings.Masters...)
				for k, x := range c.Axes {
					nc.Axes[k] = x
				}
				if err := applyAxis(&nc.Settings, ax.Name, v); err != nil {
					return nil, fmt.Errorf("matrix: %s: %s", ax.Name, CleanYAMLError(err))
				}
				nc.Axes[ax.Name] = v
				next = append(next, nc)
			}
		}
		cells = next
	}
	for i := range cells {
		c := &cells[i]
		c.Index = i
		var parts []string
		for _, ax := range sw.axes {
			parts = append(parts, ax.Name+"="+c.Axes[ax.Name])
		}
		c.Label = strings.Join(parts, " ")
		if c.Label == "" {
			c.Label = "single cell"
		}
		c.ID = fmt.Sprintf("%03d", i)
		if len(parts) > 0 {
			c.ID += "-" + fileSafe.ReplaceAllString(strings.Join(parts, ","), "_")
		}
	}
	return cells, nil
}

var fileSafe = regexp.MustCompile(`[^A-Za-z0-9=,._-]+`)

// EstimatedDuration is the sum of warm-ups and measured windows, plus a
// guess of a few seconds per master set started.
func EstimatedDuration(cells []Cell) time.Duration {
	var d time.Duration
	prev := ""
	for _, c := range cells {
		d += time.Duration(c.Settings.Warmup + c.Settings.Duration)
		if k := MastersKey(c.Settings); k != prev {
			d += 2 * time.Second
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

// MastersKey says which cells can share one set of masters: a change of
// key means new local masters (or new persistence on external ones).
func MastersKey(s Settings) string {
	return fmt.Sprintf("%v|%d|%s|%s|%s", s.Masters, s.Local, s.Persistence, s.Embedded, s.LocalCPUs)
}

// applyAxis sets one YAML-named field from a YAML scalar, type-checked by
// the YAML decoder itself.
func applyAxis(s *Settings, name, value string) error {
	doc := name + ": " + value + "\n"
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	return dec.Decode(s)
}

func yamlFieldNames() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(Settings{})
	for i := range t.NumField() {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" {
			out[tag] = true
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
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
