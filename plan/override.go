package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"lockbench/internal/ports"
	"lockbench/results"
)

// Override lays the flags set on the command line (fs, bound by bind)
// over the scenario: a flag for a swept setting replaces that axis, and
// every cell takes the flags after its own settings. A flag for a setting
// this kind of scenario does not take is refused, as its YAML key would be.
func (sc *Scenario) Override(fs *pflag.FlagSet, bind func(*pflag.FlagSet, *Settings)) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		as := strings.ReplaceAll(f.Name, "-", "_")
		name := sc.kind().settingName(as, f.Value.Type() == "int")
		if err == nil && SettingNames()[name] {
			if err = sc.kind().check(name, nil); err != nil {
				err = asGiven(FlagName(as), FlagName(name), err)
			}
		}
	})
	if err != nil {
		return err
	}
	sc.axes = slices.DeleteFunc(sc.axes, func(ax Axis) bool { return fs.Changed(FlagName(ax.Name)) })
	sc.flags = func(s *Settings) error {
		if err := ApplyChangedWith(fs, func(target *pflag.FlagSet) { bind(target, s) }); err != nil {
			return err
		}
		if mastersGiven(fs) {
			s.Local = 0 // addresses on the command line replace the file's local masters
		}
		return nil
	}
	return sc.flags(&sc.Settings)
}

// mastersGiven: --masters was given addresses (not the old count).
func mastersGiven(fs *pflag.FlagSet) bool {
	f := fs.Lookup("masters")
	return f != nil && f.Changed && f.Value.Type() != "int"
}

// FlagsScenario is the fault scenario of `lockbench chaos` without a file:
// one cell, "flags", of the fault defaults (the flags are laid over it).
func FlagsScenario() *Scenario {
	return &Scenario{Name: "chaos", Faulty: true, Settings: FaultDefaults(), Repeat: 1, named: []namedCell{{name: "flags"}}}
}

// Select keeps the named cells, in the scenario's order; no names keep all.
func (sc *Scenario) Select(names []string) error {
	if len(names) == 0 {
		return nil
	}
	var all []string
	for _, c := range sc.named {
		all = append(all, c.name)
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return fmt.Errorf("cell: %q is not a cell of %s; use one of %s", n, sc.Name, strings.Join(all, ", "))
		}
	}
	sc.named = slices.DeleteFunc(sc.named, func(c namedCell) bool { return !slices.Contains(names, c.name) })
	return nil
}

// ReplaceFromFlags gives every cell the faults (--fault) and expectations
// (--expect) given, when any are.
func (sc *Scenario) ReplaceFromFlags(faults, expect []string) error {
	var fs []Fault
	for _, f := range faults {
		spec, err := ParseFaultFlag(f)
		if err != nil {
			return err
		}
		fs = append(fs, spec)
	}
	var ex []Expectation
	for _, e := range expect {
		x, err := ParseExpectFlag(e)
		if err != nil {
			return err
		}
		ex = append(ex, x)
	}
	if len(faults) > 0 {
		sc.ReplaceFaults(fs)
	}
	if len(expect) > 0 {
		sc.ReplaceExpect(ex)
	}
	return nil
}

// ReplaceFaults gives every cell these faults (--fault).
func (sc *Scenario) ReplaceFaults(fs []Fault) {
	sc.faults = fs
	for i := range sc.named {
		sc.named[i].ownFault = false
	}
}

// ReplaceExpect gives every cell these expectations (--expect).
func (sc *Scenario) ReplaceExpect(ex []Expectation) {
	sc.expect = ex
	for i := range sc.named {
		sc.named[i].ownExp = false
	}
}

// RunScenario is `lockbench run`'s scenario: one cell of s, "run",
// measured repeat times.
func RunScenario(s Settings, repeat int) (*Scenario, []Cell, error) {
	s.serversAsMasters()
	sc := &Scenario{Name: "run", Settings: s, Repeat: repeat}
	c := Cell{ID: "run", Label: "run", Settings: s, Axes: map[string]string{}}
	var err error
	c.Resolved, err = c.resolve()
	return sc, []Cell{c}, err
}

// Expand lays the flags over the scenario (Override), refuses a matrix
// too large (unless force), and expands and checks its cells; warnings are
// the benchmark cells' settings warnings, each once (a fault cell's are
// said as it starts).
func (sc *Scenario) Expand(fs *pflag.FlagSet, bind func(*pflag.FlagSet, *Settings)) (cells []Cell, warnings []string, err error) {
	if err := sc.checkRepeat(); err != nil {
		return nil, nil, err
	}
	if _, err := results.ParseThresholds(sc.Thresholds); err != nil {
		return nil, nil, err
	}
	if err := sc.Override(fs, bind); err != nil {
		return nil, nil, err
	}
	if err := sc.CheckSize(sc.Settings.Force); err != nil {
		return nil, nil, err
	}
	if cells, err = sc.Cells(); err != nil {
		return nil, nil, err
	}
	for _, c := range cells {
		if err := c.Validate(); err != nil {
			return nil, nil, fmt.Errorf("cell %s: %w", c.Label, err)
		}
		for _, w := range c.Warnings() {
			if !c.kind().warnsAtStart && !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	return cells, warnings, nil
}

// Overrides are what a command's flags lay over a scenario file: nil
// leaves the file's value.
type Overrides struct {
	Repeat      *int
	Thresholds  []string // added to the file's
	MetricsAddr *string
}

// OverrideRun lays o over the scenario, checked: how many times it runs,
// what it must meet, where it serves live metrics.
func (sc *Scenario) OverrideRun(o Overrides) error {
	if o.Repeat != nil {
		if err := ValidateRepeat(*o.Repeat); err != nil {
			return err
		}
		sc.Repeat = *o.Repeat
	}
	sc.Thresholds = append(sc.Thresholds, o.Thresholds...)
	if o.MetricsAddr != nil {
		sc.MetricsAddr = *o.MetricsAddr
	}
	if sc.MetricsAddr == "" {
		return nil
	}
	return ports.CheckMetricsAddr(sc.MetricsAddr)
}
