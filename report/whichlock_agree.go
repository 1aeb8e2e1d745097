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

// MatrixAgreement is two which-lock runs compared outcome by outcome in
// every cell both measured. A reversal is one run's settled-clean outcome
// (0 of n, its 95% upper bound at or below that run's max rate) while the
// other run's interval for it lies wholly above that rate: chance alone
// gives 1 of 14 in one run and 0 of 14 in another, never that. A verdict
// settled in one run and not in the other, or k/n that differ inside the
// noise, differ, and are listed.
type MatrixAgreement struct {
	Compared int // outcomes measured in both runs
	// Settled: of them, settled clean in at least one run (the only
	// outcomes a reversal can be found on).
	Settled  int
	Reversed []string // design × fault: outcome, what each run said
	Differ   []string // not reversed, but not the same k/n
	// Recoloured: of Differ, those whose cell reads differently on the
	// page (broken in no run in one, in some in the other): a race the
	// repeats did not size, which a need on that fault would judge apart.
	Recoloured int
	// MaxRates are the two runs' max rates.
	MaxRates [2]float64
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
	out := MatrixAgreement{MaxRates: [2]float64{rateOr(a.MaxRate), rateOr(b.MaxRate)}}
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

// rateOr is a matrix's max rate, or the default for one written before it.
func rateOr(r float64) float64 {
	if r > 0 {
		return r
	}
	return DefaultMaxRate
}

func (m *MatrixAgreement) add(where, name string, a, b *Outcome) {
	if a == nil || b == nil || a.Runs == 0 || b.Runs == 0 {
		return
	}
	m.Compared++
	ra, rb := m.MaxRates[0], m.MaxRates[1]
	cleanA, cleanB := Settled(a.Broken, a.Runs, ra) == "clean", Settled(b.Broken, b.Runs, rb) == "clean"
	if cleanA || cleanB {
		m.Settled++
	}
	said := fmt.Sprintf("%s: %s %s, then %s", where, name, RateText(a.Broken, a.Runs), RateText(b.Broken, b.Runs))
	switch {
	case cleanA && above(b, ra):
		m.Reversed = append(m.Reversed, fmt.Sprintf("%s (settled clean at %s in the first run; the second's interval lies wholly above it)", said, pct(ra)))
	case cleanB && above(a, rb):
		m.Reversed = append(m.Reversed, fmt.Sprintf("%s (settled clean at %s in the second run; the first's interval lies wholly above it)", said, pct(rb)))
	case a.Broken*b.Runs != b.Broken*a.Runs:
		if (a.Broken == 0) != (b.Broken == 0) {
			m.Recoloured++
			said += " (the page's colour changes)"
		}
		m.Differ = append(m.Differ, said) // a rare event seen in one run only, say
	}
}

// above says o's 95% interval lies wholly above rate.
func above(o *Outcome, rate float64) bool {
	lo, _ := RateInterval(o.Broken, o.Runs)
	return lo > rate
}

// Write says what the comparison found: "no reversal" with the count of
// outcomes compared, or every reversal, then what differs inside the
// noise.
func (m MatrixAgreement) Write(w io.Writer) error {
	var b strings.Builder
	rates := pct(m.MaxRates[0])
	if m.MaxRates[0] != m.MaxRates[1] {
		rates = fmt.Sprintf("%s and %s", pct(m.MaxRates[0]), pct(m.MaxRates[1]))
	}
	verdict := "no reversal"
	if n := len(m.Reversed); n > 0 {
		verdict = fmt.Sprintf("%d reversed", n)
	}
	fmt.Fprintf(&b, "which-lock: %s in %d outcomes measured in both runs (%d settled clean in one of them at the max rate %s); %d differ inside the noise (%d of them broken in no run of one, in some of the other)\n",
		verdict, m.Compared, m.Settled, rates, len(m.Differ), m.Recoloured)
	for _, r := range m.Reversed {
		b.WriteString("  REVERSED " + r + "\n")
	}
	for _, d := range m.Differ {
		b.WriteString("  differs  " + d + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// AreWhichLockRuns says both paths hold a which-lock run's matrix.
func AreWhichLockRuns(a, b string) bool {
	_, err1 := ReadMatrix(a)
	_, err2 := ReadMatrix(b)
	return err1 == nil && err2 == nil
}

// FailOnReversal is --fail-on's word for two which-lock runs: exit 3 when
// one reverses the other's settled-clean outcome.
const FailOnReversal = "reversal"

// CompareWhichLockRuns compares the verdicts of two which-lock runs and
// writes their agreement to w; ok is false, and nothing written, unless
// both paths are which-lock runs. m.Reversed lists the outcomes settled
// clean in one run whose interval lies wholly above the max rate in the
// other; m.Settled how many outcomes a reversal could be found on.
func CompareWhichLockRuns(w io.Writer, a, b string) (ok bool, m MatrixAgreement, err error) {
	ma, err1 := ReadMatrix(a)
	mb, err2 := ReadMatrix(b)
	if err1 != nil || err2 != nil {
		return false, m, nil
	}
	m = AgreeMatrices(ma, mb)
	if err := m.Write(w); err != nil {
		return true, m, err
	}
	if m.Compared == 0 {
		return true, m, errors.New("the two which-lock runs share no measured cell")
	}
	return true, m, nil
}
