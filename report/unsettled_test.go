package report

import (
	"strings"
	"testing"
)

// The unsettled answer names what is not settled: a p99 on too few
// acquires is not "too few fault events" (the committed run of
// 2026-12-06 said so of designs whose fault outcomes were settled).
func TestUnsettledTextNamesWhatIsShort(t *testing.T) {
	p99 := "acquire p99 " + notSettled + ": 686 µs on 6800 acquires at the common rate, fewer than the 10000 " + p99SamplesShort + " (run longer cells or more repeats)"
	events := "no lost update under leader-kill " + notSettled + ": 0 of 5 events"
	for _, c := range []struct {
		reasons    []string
		want, miss string
	}{
		{[]string{p99}, "acquire p99 stands on fewer than the 10000 acquires", "fault events"},
		{[]string{events}, "too few fault events", "acquire p99"},
		{[]string{events, p99}, "too few fault events to bound them at the max rate 20% (14 judged events at that rate: more --events or --repeat), and acquire p99", ""},
	} {
		w := &WhichLock{MaxRate: 0.2, Rows: []MatrixRow{{Design: "d", Reasons: c.reasons}}}
		got := w.UnsettledText()
		if !strings.Contains(got, c.want) || (c.miss != "" && strings.Contains(got, c.miss)) {
			t.Errorf("reasons %q: %q; want %q without %q", c.reasons, got, c.want, c.miss)
		}
	}
}
