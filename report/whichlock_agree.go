package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MatrixAgreement is two which-lock runs compared cell by cell: a verdict
// unanimous in both runs (an outcome broken in 0 of n runs, or in n of n)
// is reversed when the two say the opposite; a cell unanimous in one and
// split in the other (a rare event seen once) differs, and is listed.
type MatrixAgreement struct {
	Compared  int      // outcomes measured in both runs
	Unanimous int      // of them unanimous in at least one run
	Reversed  []string // design × fault: outcome, what each run said
	Differ    []string // not reversed, but not the same k/n
	// Recoloured: of Differ, those whose cell reads differently on the
	// page (broken in no run in one, in some in the other): a race the
	// repeats did not size, which a need on that fault would judge apart.
	Recoloured int
}

// ReadMatrix reads a which-lock run's matrix as data (WhichLockMatrixFile,
// in dir or the file itself).
func ReadMatrix(path string) (*WhichLock, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, WhichLockMatrixFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w WhichLock
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &w, nil
}

// AgreeMatrices compares run b with run a, outcome by outcome in every
// cell both measured.
func AgreeMatrices(a, b *WhichLock) MatrixAgreement {
	var out MatrixAgreement
	fault := map[string]int{}
	for i, f := range b.Faults {
		fault[f] = i
	}
	rows := map[string]MatrixRow{}
	for _, r := range b.Rows {
		rows[r.Design] = r
	}
	for _, ra := range a.Rows {
		rb, ok := rows[ra.Design]
		if !ok {
			continue
		}
		for i, ca := range ra.Faults {
			j, ok := fault[a.Faults[i]]
			if !ok || j >= len(rb.Faults) {
				continue
			}
			cb := rb.Faults[j]
			where := ra.Design + " × " + a.Faults[i]
			for _, o := range []struct {
				name string
				a, b *Outcome
			}{{"exclusion broken", ca.Overlap, cb.Overlap}, {"data lost", ca.Lost, cb.Lost}} {
				out.add(where, o.name, o.a, o.b)
			}
		}
	}
	return out
}

func (m *MatrixAgreement) add(where, name string, a, b *Outcome) {
	if a == nil || b == nil || a.Runs == 0 || b.Runs == 0 {
		return
	}
	m.Compared++
	ua, ub := a.unanimous(), b.unanimous()
	if ua != "" || ub != "" {
		m.Unanimous++
	}
	said := fmt.Sprintf("%s: %s in %d/%d runs, then %d/%d", where, name, a.Broken, a.Runs, b.Broken, b.Runs)
	switch {
	case ua != "" && ub != "" && ua != ub:
		m.Reversed = append(m.Reversed, said)
	case a.Broken*b.Runs != b.Broken*a.Runs:
		if (a.Broken == 0) != (b.Broken == 0) {
			m.Recoloured++
			said += " (the page's colour changes)"
		}
		m.Differ = append(m.Differ, said) // a rare event seen in one run only, say
	}
}

// unanimous is "never" (broken in 0 of n), "always" (n of n) or "".
func (o *Outcome) unanimous() string {
	switch o.Broken {
	case 0:
		return "never"
	case o.Runs:
		return "always"
	}
	return ""
}

// Write says what the comparison found.
func (m MatrixAgreement) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "which-lock: %d outcomes measured in both runs, %d unanimous in one of them; %d reversed, %d differ in k/n only (%d of them broken in no run of one, in some of the other)\n",
		m.Compared, m.Unanimous, len(m.Reversed), len(m.Differ), m.Recoloured)
	for _, r := range m.Reversed {
		b.WriteString("  REVERSED " + r + "\n")
	}
	for _, d := range m.Differ {
		b.WriteString("  differs  " + d + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CompareWhichLockRuns compares the verdicts of two which-lock runs and
// writes their agreement to w; ok is false, and nothing written, unless
// both paths are which-lock runs. reversed: one run reversed a verdict the
// other's runs agreed on.
func CompareWhichLockRuns(w io.Writer, a, b string) (ok, reversed bool, err error) {
	ma, err1 := ReadMatrix(a)
	mb, err2 := ReadMatrix(b)
	if err1 != nil || err2 != nil {
		return false, false, nil
	}
	m := AgreeMatrices(ma, mb)
	if err := m.Write(w); err != nil {
		return true, false, err
	}
	if m.Compared == 0 {
		return true, false, errors.New("the two which-lock runs share no measured cell")
	}
	return true, len(m.Reversed) > 0, nil
}
