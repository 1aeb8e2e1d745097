package results

import "testing"

// A fault cell's repeats are each judged: combined, the checkers' counts
// are their medians with the range in Spread, not their sum (a verdict
// no repeat showed), the verdict is the worst repeat's, and the repeats
// that judged nothing are not counted as safe ones.
func TestRepeatSafetyIsPerRepeat(t *testing.T) {
	run := func(lost, viol int64, verdict string) Run {
		return Run{Outcomes: Outcomes{Tally: Tally{Acquired: 100}}, Safety: Safety{ResourceChecked: true, LostUpdates: lost, Violations: viol, Verdict: verdict,
			AcknowledgedWrites: 100}}
	}
	m := CombineRepeats([]Run{run(15, 0, Met), run(19, 2, NotMet), run(0, 0, NotJudged), run(0, 0, Met)})
	s, rep := m.Safety, m.Repeats
	switch {
	case !s.ResourceChecked:
		t.Fatal("the combined cell lost its checker's figures")
	case s.LostUpdates != 15: // median of the judged 0, 15, 19 (not the sum, nor with the repeat that judged nothing)
		t.Errorf("lost updates %d; want the judged repeats' median 15", s.LostUpdates)
	case rep.Spread["lost_updates"].Min != 0 || rep.Spread["lost_updates"].Max != 19:
		t.Errorf("lost updates spread %+v; want 0..19", rep.Spread["lost_updates"])
	case s.Verdict != NotMet:
		t.Errorf("verdict %q; want the worst repeat's (not met)", s.Verdict)
	case rep.Judged != 3 || rep.Unsafe != 2:
		t.Errorf("judged %d, unsafe %d; want 3 judged (one judged nothing), 2 unsafe", rep.Judged, rep.Unsafe)
	case rep.UnsafeText() != "unsafe in 2 of 3 runs":
		t.Errorf("%q", rep.UnsafeText())
	}
	if safe := CombineRepeats([]Run{run(0, 0, Met), run(0, 0, Met)}); safe.Repeats.UnsafeText() != "safe in 2 of 2 runs" {
		t.Errorf("%q; want safe in 2 of 2 runs", safe.Repeats.UnsafeText())
	}
	if bench := CombineRepeats([]Run{{}, {}}); bench.Repeats.UnsafeText() != "" || bench.Safety.ResourceChecked {
		t.Errorf("a benchmark cell's repeats: %q", bench.Repeats.UnsafeText())
	}
}
