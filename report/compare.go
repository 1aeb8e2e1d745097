package report

import (
	"encoding/json"
	"fmt"
	"lockbench/results"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CompareFigures are the figures compare judges, in table order.
var CompareFigures = []string{"cycles_per_sec", "acquire_p50", "acquire_p99", "acquire_p999", "release_p50", "release_p99"}

// DefaultAlpha is the significance level of compare.
const DefaultAlpha = 0.05

// CompareCell is one cell of either side of a comparison.
type CompareCell struct {
	Label    string
	Settings map[string]string // identity: the settings that define the cell
	Run      results.Run
}

// volatileSettings differ between two runs of the very same cell: they
// never decide which cells match.
var volatileSettings = map[string]bool{
	"masters": true, "local": true, "seed": true, "key_prefix": true, "force": true, "start_at": true,
	"lockbench_version": true, "server_version": true, "embedded": true, "quorum": true,
	"tls_ca": true, "tls_cert": true, "tls_key": true, "tls_insecure": true,
}

// identity is the settings of a run that say which cell it is; the
// master set counts as its size N. recorded, when known, are the config
// keys the result file has: a setting its version did not record is left
// out rather than read as its zero value.
func identity(cfg *results.CellConfig, recorded map[string]bool) map[string]string {
	// By JSON key, so a setting added later takes part without a change here.
	var m map[string]any
	if cfg != nil {
		if b, err := json.Marshal(cfg); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	out := map[string]string{}
	for k, v := range m {
		if volatileSettings[k] || (recorded != nil && !recorded[k]) {
			continue
		}
		switch x := v.(type) {
		case string:
			out[k] = x
		case float64:
			out[k] = strconv.FormatFloat(x, 'g', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(x)
		}
	}
	out["N"] = strconv.Itoa(settingsOf(cfg).N)
	return out
}

// LoadCompareSide reads a results directory or one run JSON file (from
// run --json-out / --json, or a sweep's cells/*.json).
func LoadCompareSide(path string) ([]CompareCell, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &results.InputError{Field: "OLD/NEW", Value: path, Problem: "not found", Accepted: "a results directory or a run JSON file"}
	}
	if !st.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var r results.Run
		if err := json.Unmarshal(b, &r); err != nil || r.Config == nil {
			return nil, &results.InputError{Field: "OLD/NEW", Value: path, Problem: "not a lockbench run result", Accepted: "a results directory or a run JSON file (lockbench run --json-out FILE)"}
		}
		results.UpgradeLegacy(&r, b)
		label := strings.TrimSuffix(filepath.Base(path), ".json")
		if r.Cell != nil && r.Cell.Label != "" {
			label = r.Cell.Label
		}
		return []CompareCell{{Label: label, Settings: identity(r.Config, configKeys(b)), Run: r}}, nil
	}
	res, err := loadDir(path, false)
	if err != nil {
		return nil, err
	}
	if len(res.Cells) == 0 {
		return nil, &results.InputError{Field: "OLD/NEW", Value: path, Problem: "no cells with results", Accepted: "a results directory with cells/*.json"}
	}
	out := make([]CompareCell, len(res.Cells))
	for i, c := range res.Cells {
		out[i] = CompareCell{Label: c.Info.Label, Settings: identity(c.Run.Config, c.ConfigKeys), Run: c.Run}
	}
	return out, nil
}

// Comparison is what compare found: one row per matched cell and figure.
type Comparison struct {
	Old      string       `json:"old"`
	New      string       `json:"new"`
	Alpha    float64      `json:"alpha"`
	Test     string       `json:"test"`
	Ignored  []string     `json:"ignored"`
	Rows     []CompareRow `json:"rows"`
	Matched  int          `json:"matched_cells"`
	OldOnly  []string     `json:"old_only"`
	NewOnly  []string     `json:"new_only"`
	Warnings []string     `json:"warnings,omitempty"`
	FailOn   *FailOnCheck `json:"fail_on,omitempty"`
}

// CompareRow is one figure of one matched cell.
type CompareRow struct {
	Cell    string         `json:"cell"`
	Changed string         `json:"changed,omitempty"` // ignored settings that differ: "workers 1 → 64"
	Figure  string         `json:"figure"`
	Old     results.Spread `json:"old"`
	New     results.Spread `json:"new"`
	Delta   float64        `json:"delta_pct"` // new median over old, −1, in %; NaN when old is 0
	P       float64        `json:"p"`
	MinP    float64        `json:"min_p"`
	// Verdict: "significant", "~" (no difference shown at Alpha), or
	// "too few repeats" (these sample sizes can never reach Alpha).
	Verdict string `json:"verdict"`
}

// Significant reports a difference shown at the comparison's level.
func (r CompareRow) Significant() bool { return r.Verdict == "significant" }

// MarshalJSON writes NaN deltas as null.
func (r CompareRow) MarshalJSON() ([]byte, error) {
	type plain CompareRow
	var d *float64
	if !math.IsNaN(r.Delta) && !math.IsInf(r.Delta, 0) {
		d = &r.Delta
	}
	return json.Marshal(struct {
		plain
		Delta *float64 `json:"delta_pct"`
	}{plain(r), d})
}

// Compare matches cells of old and new by their settings (leaving out
// ignore) and tests each figure's repeats for a difference.
func Compare(old, new []CompareCell, ignore []string, alpha float64) (*Comparison, error) {
	if !(alpha > 0 && alpha < 1) {
		return nil, &results.InputError{Field: "--alpha", Value: fmt.Sprint(alpha), Problem: "out of range", Accepted: "a significance level in (0, 1) such as 0.05"}
	}
	ign, err := ignoreSet(old, new, ignore)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Alpha: alpha, Test: "Mann-Whitney U, two-sided, on the repeats", Ignored: sortedKeys(ign), Rows: []CompareRow{}, OldOnly: []string{}, NewOnly: []string{}}
	var unshared []string
	old, new, unshared = sharedSettings(old, new)
	if len(unshared) > 0 {
		c.Warnings = append(c.Warnings, "not matched on "+strings.Join(unshared, ", ")+": not recorded in every result (written by another lockbench version)")
	}
	byKey := map[string][]int{}
	for i, o := range old {
		k := matchKey(o.Settings, ign)
		byKey[k] = append(byKey[k], i)
	}
	used := map[int]bool{}
	for _, n := range new {
		cands := byKey[matchKey(n.Settings, ign)]
		if len(cands) > 1 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("cell %s is ambiguous: it matches %d old cells once --ignore %s applies; left out (compare results with one value of that setting each, or ignore fewer)", n.Label, len(cands), strings.Join(c.Ignored, ",")))
			continue
		}
		if len(cands) == 0 || used[cands[0]] {
			c.NewOnly = append(c.NewOnly, n.Label+nearest(n, old, ign))
			continue
		}
		o := old[cands[0]]
		used[cands[0]] = true
		c.Matched++
		c.Rows = append(c.Rows, compareCell(o, n, ign, alpha)...)
	}
	for i, o := range old {
		if !used[i] && len(byKey[matchKey(o.Settings, ign)]) <= 1 {
			c.OldOnly = append(c.OldOnly, o.Label)
		}
	}
	return c, nil
}

// sharedSettings keeps, in copies of old and new, the settings every cell
// of both records; unshared are the others. A later version records more
// settings, and a setting one side lacks cannot tell cells apart.
func sharedSettings(old, new []CompareCell) (o, n []CompareCell, unshared []string) {
	all := append(slices.Clone(old), new...)
	count := map[string]int{}
	for _, c := range all {
		for k := range c.Settings {
			count[k]++
		}
	}
	for k, cnt := range count {
		if cnt < len(all) {
			unshared = append(unshared, k)
		}
	}
	if len(unshared) == 0 {
		return old, new, nil
	}
	sort.Strings(unshared)
	for i := range all {
		s := maps.Clone(all[i].Settings)
		for _, k := range unshared {
			delete(s, k)
		}
		all[i].Settings = s
	}
	return all[:len(old):len(old)], all[len(old):], unshared
}

// configKeys are the keys of a result file's config.
func configKeys(b []byte) map[string]bool {
	var raw struct{ Config map[string]json.RawMessage }
	if json.Unmarshal(b, &raw) != nil || raw.Config == nil {
		return nil
	}
	out := make(map[string]bool, len(raw.Config))
	for k := range raw.Config {
		out[k] = true
	}
	return out
}

func compareCell(o, n CompareCell, ign map[string]bool, alpha float64) []CompareRow {
	var changed []string
	for _, k := range sortedKeys(ign) {
		if o.Settings[k] != n.Settings[k] {
			changed = append(changed, fmt.Sprintf("%s %s → %s", k, orDash(o.Settings[k]), orDash(n.Settings[k])))
		}
	}
	var rows []CompareRow
	for _, name := range CompareFigures {
		f, _ := results.FigureByName(name)
		xs, ys := results.Samples(o.Run, f), results.Samples(n.Run, f)
		if len(xs) == 0 || len(ys) == 0 {
			continue // no latency on one side (nothing acquired)
		}
		rows = append(rows, judge(n.Label, strings.Join(changed, ", "), f, xs, ys, alpha))
	}
	return rows
}

// judge tests one figure: old samples xs, new ys.
func judge(cell, changed string, f results.Figure, xs, ys []float64, alpha float64) CompareRow {
	r := CompareRow{Cell: cell, Changed: changed, Figure: f.Name, Old: results.NewSpread(xs), New: results.NewSpread(ys)}
	r.Delta = math.NaN()
	if r.Old.Median != 0 {
		r.Delta = (r.New.Median/r.Old.Median - 1) * 100
	}
	u := MannWhitney(xs, ys)
	r.P, r.MinP = u.P, u.MinP
	switch {
	case u.MinP > alpha:
		r.Verdict = "too few repeats"
	case u.P <= alpha:
		r.Verdict = "significant"
	default:
		r.Verdict = "~"
	}
	return r
}

// ignoreSet checks the --ignore keys against the settings the cells have.
func ignoreSet(old, new []CompareCell, ignore []string) (map[string]bool, error) {
	known := map[string]bool{}
	for _, c := range append(slices.Clone(old), new...) {
		for k := range c.Settings {
			known[k] = true
		}
	}
	out := map[string]bool{}
	for _, k := range ignore {
		k = strings.ReplaceAll(strings.TrimSpace(k), "-", "_")
		if k == "local" || k == "masters" {
			k = "N" // the master set is matched by its size
		}
		if !known[k] {
			return nil, &results.InputError{Field: "--ignore", Value: k, Problem: "not a setting of these results", Accepted: strings.Join(sortedKeys(known), ", ")}
		}
		out[k] = true
	}
	return out, nil
}

func matchKey(s map[string]string, ign map[string]bool) string {
	var parts []string
	for _, k := range sortedKeys(s) {
		if !ign[k] {
			parts = append(parts, k+"="+s[k])
		}
	}
	return strings.Join(parts, "|")
}

// nearest says which settings keep a new cell from its closest old one,
// so that the user knows what to --ignore.
func nearest(n CompareCell, old []CompareCell, ign map[string]bool) string {
	best := []string(nil)
	for _, o := range old {
		var diff []string
		for _, k := range sortedKeys(union(n.Settings, o.Settings)) {
			if !ign[k] && n.Settings[k] != o.Settings[k] {
				diff = append(diff, k)
			}
		}
		if best == nil || len(diff) < len(best) {
			best = diff
		}
	}
	if len(best) == 0 {
		return ""
	}
	return " (closest old cell differs in " + strings.Join(best, ", ") + ")"
}

func union(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// FailOn is a --fail-on condition: a significant change of a figure
// beyond a percentage, e.g. cycles_per_sec<-5% or acquire_p99>10%.
type FailOn struct {
	Expr   string  `json:"expr"`
	Figure string  `json:"figure"`
	Op     string  `json:"op"` // < or >
	Pct    float64 `json:"pct"`
}

// FailOnCheck is the outcome of the --fail-on conditions.
type FailOnCheck struct {
	Checked []string `json:"checked"`
	Broken  []string `json:"broken"`
	// NotJudged names each condition and cell that could not be judged
	// (too few repeats to ever be significant); Unjudged are conditions
	// judged on no cell at all, which guard nothing.
	NotJudged []string `json:"not_judged"`
	Unjudged  []string `json:"unjudged"`
}

// ParseFailOns parses every --fail-on; the first bad one is the error.
func ParseFailOns(exprs []string) ([]FailOn, error) {
	var out []FailOn
	for _, e := range exprs {
		f, err := ParseFailOn(e)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseFailOn parses FIGURE<PCT% or FIGURE>PCT%.
func ParseFailOn(s string) (FailOn, error) {
	expr := strings.Join(strings.Fields(s), "")
	bad := func(why string) (FailOn, error) {
		return FailOn{}, &results.InputError{Field: "--fail-on", Value: s, Problem: why, Accepted: "FIGURE<PCT% or FIGURE>PCT%, e.g. cycles_per_sec<-5% or acquire_p99>10%; figures: " + strings.Join(results.FigureNames(), ", ")}
	}
	i := strings.IndexAny(expr, "<>")
	if i <= 0 || !strings.HasSuffix(expr, "%") {
		return bad("not of the form FIGURE<PCT%")
	}
	f := FailOn{Expr: expr, Figure: expr[:i], Op: expr[i : i+1]}
	fig, ok := results.FigureByName(f.Figure)
	if !ok {
		return bad(fmt.Sprintf("%q is not a figure", f.Figure))
	}
	f.Figure = fig.Name // a rule's name for it (throughput, acquire.p99) too
	v, err := strconv.ParseFloat(strings.TrimSuffix(expr[i+1:], "%"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("the percentage is not a number")
	}
	f.Pct = v
	return f, nil
}

// CheckFailOn applies the conditions to the comparison's rows: a row
// breaks one when its change is significant and beyond the percentage.
func (c *Comparison) CheckFailOn(conds []FailOn) *FailOnCheck {
	out := &FailOnCheck{Checked: []string{}, Broken: []string{}, NotJudged: []string{}, Unjudged: []string{}}
	for _, f := range conds {
		out.Checked = append(out.Checked, f.Expr)
		judged := 0
		for _, r := range c.Rows {
			if r.Figure != f.Figure {
				continue
			}
			if r.Verdict == "too few repeats" {
				out.NotJudged = append(out.NotJudged, fmt.Sprintf("%s: cell %s: too few repeats (%d vs %d) to be significant at %g", f.Expr, r.Cell, r.Old.N, r.New.N, c.Alpha))
				continue
			}
			judged++
			beyond := (f.Op == "<" && r.Delta < f.Pct) || (f.Op == ">" && r.Delta > f.Pct)
			if r.Significant() && beyond {
				out.Broken = append(out.Broken, fmt.Sprintf("%s: cell %s: %s %+.1f%% (p=%.3g)", f.Expr, r.Cell, r.Figure, r.Delta, r.P))
			}
		}
		if judged == 0 {
			out.Unjudged = append(out.Unjudged, f.Expr)
		}
	}
	c.FailOn = out
	return out
}
