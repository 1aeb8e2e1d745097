package check

import (
	"slices"
	"testing"
	"time"
)

// w is a logged write on key 0: it read n entries ending in last, wrote id
// and got outcome o, between begin and end.
func w(id string, n int64, last string, o Outcome, begin, end int64) Op {
	return Op{Key: 0, ID: id, Read: n, ReadLast: last, Outcome: o, Begin: begin, End: end}
}

// The history check on hand-made histories: each kind of finding goes red
// on its own, and a clean history (with a refused write and a skipped
// one) finds nothing.
func TestHistoryFindings(t *testing.T) {
	clean := []Op{w("a", 0, "", Written, 0, 10), w("b", 1, "a", Written, 20, 30), w("r", 1, "a", Refused, 25, 40),
		{Key: 0, Read: 2, ReadLast: "b", Outcome: Skipped}, w("c", 2, "b", Written, 50, 60)}
	for name, tc := range map[string]struct {
		ops   []Op
		final []string
		want  Writes
	}{
		"clean": {clean, []string{"a", "b", "c"}, Writes{Acknowledged: 3, Refused: 1, FinalLength: 3}},
		// A failover lost c's commit: the next holder read (2, b) and wrote d.
		"lost after a failover": {append(slices.Clone(clean), w("d", 2, "b", Written, 70, 80)), []string{"a", "b", "d"},
			Writes{Acknowledged: 4, Refused: 1, Lost: 1, FinalLength: 3, LostIDs: []string{"c"}}},
		// The counter's blind spot: a write in doubt beside the loss. It is
		// counted apart; c is still lost.
		"lost beside a write in doubt": {append(slices.Clone(clean), w("u", 3, "c", Unknown, 65, OpenEnd), w("d", 2, "b", Written, 70, 80)),
			[]string{"a", "b", "d"}, Writes{Acknowledged: 4, Refused: 1, Lost: 1, InDoubt: 1, FinalLength: 3, LostIDs: []string{"c"}}},
		// An in-doubt write that did land, and the next one read it: safe.
		"in doubt, landed": {[]Op{w("a", 0, "", Written, 0, 10), w("u", 1, "a", Unknown, 20, OpenEnd), w("b", 2, "u", Written, 40, 50)},
			[]string{"a", "u", "b"}, Writes{Acknowledged: 2, InDoubt: 1, InDoubtLanded: 1, FinalLength: 3}},
		// Two holders read (1, a): b landed after c, on a history b never
		// read; c's loss is the overwrite.
		"stale accepted": {[]Op{w("a", 0, "", Written, 0, 10), w("c", 1, "a", Written, 20, 30), w("e", 2, "c", Written, 40, 50),
			w("b", 2, "a", Written, 20, 60)}, []string{"a", "c", "b"},
			Writes{Acknowledged: 4, Lost: 1, StaleAccepted: 1, FinalLength: 3, LostIDs: []string{"e"}, StaleIDs: []string{"b"}}},
		// A refused write found in the history was accepted after all.
		"refused yet present": {[]Op{w("a", 0, "", Written, 0, 10), w("r", 1, "a", Refused, 20, 30)}, []string{"a", "r"},
			Writes{Acknowledged: 1, Refused: 1, StaleAccepted: 1, FinalLength: 2, StaleIDs: []string{"r"}}},
		// An id no log has: counted, so a lost client log cannot pass unseen.
		"unlogged": {[]Op{w("a", 0, "", Written, 0, 10)}, []string{"a", "z"}, Writes{Acknowledged: 1, Unlogged: 1, FinalLength: 2}},
	} {
		got := CheckHistories(tc.ops, map[uint64][]string{0: tc.final})
		got.LostAt, got.RefusedAt = nil, nil
		if !equalWrites(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, tc.want)
		}
	}
}

func equalWrites(a, b Writes) bool {
	return slices.Equal(a.LostIDs, b.LostIDs) && slices.Equal(a.StaleIDs, b.StaleIDs) &&
		a.Acknowledged == b.Acknowledged && a.Lost == b.Lost && a.StaleAccepted == b.StaleAccepted && a.InDoubt == b.InDoubt &&
		a.InDoubtLanded == b.InDoubtLanded && a.Refused == b.Refused && a.Unlogged == b.Unlogged && a.FinalLength == b.FinalLength
}

// porcupine judges the same loss once the final read closes the history:
// the last acknowledged write missing from the final read, which no later
// section read, is not linearizable; the final read that has it is.
func TestFinalReadJudgedByPorcupine(t *testing.T) {
	ops := []Op{w("a", 0, "", Written, 0, 10), w("b", 1, "a", Written, 20, 30)}
	lost := append(slices.Clone(ops), FinalOps(ops, map[uint64][]string{0: {"a"}}, 100)...)
	if j := CheckLinearizable(lost, time.Minute); j.Verdict != NotLinearizable {
		t.Errorf("final read without b: %+v", j.Linearizability)
	}
	kept := append(slices.Clone(ops), FinalOps(ops, map[uint64][]string{0: {"a", "b"}}, 100)...)
	if j := CheckLinearizable(kept, time.Minute); j.Verdict != Linearizable {
		t.Errorf("final read with b: %+v", j.Linearizability)
	}
}

// A fault meets a holder only when the holder was inside its section at
// the fault and still there when the lock could be handed on: a crash
// after which the service granted again only once the short holds had
// ended exercised nothing; one long hold across the outage did.
func TestExercisedHolds(t *testing.T) {
	s := int64(time.Second)
	short := []Acquire{
		{Key: 1, Client: 0, Done: 1 * s, Used: s + s/5},   // held at the crash (1.1 s), ended at 1.2 s
		{Key: 1, Client: 1, Done: 3 * s, Used: 3*s + s/5}, // the service granted again at 3 s
	}
	ck := Findings{Acquired: short}
	if n := ck.ExercisedAtServer(s+s/10, 0); n != 0 {
		t.Errorf("short holds: %d exercised, want 0", n)
	}
	long := append(slices.Clone(short), Acquire{Key: 2, Client: 0, Done: s, Used: 5 * s}, Acquire{Key: 2, Client: 1, Done: 6 * s, Used: 7 * s})
	ck = Findings{Acquired: long}
	if n := ck.ExercisedAtServer(s+s/10, 0); n != 1 {
		t.Errorf("a long hold across the outage, its key granted again: %d exercised, want 1", n)
	}
	// Its key never granted again: it does not count.
	ck = Findings{Acquired: long[:3]}
	if n := ck.ExercisedAtServer(s+s/10, 0); n != 0 {
		t.Errorf("key never granted again: %d exercised, want 0", n)
	}
	// A paused client 0 held key 2 from 1 s to 5 s; the fault lasted 1.1–4 s.
	paused := []Acquire{{Key: 2, Client: 0, Done: s, Used: 5 * s}, {Key: 2, Client: 1, Done: 3 * s, Used: 4 * s}}
	ck = Findings{Acquired: paused}
	if n := ck.ExercisedAtClients(s+s/10, 4*s, []int{0}); n != 1 {
		t.Errorf("paused holder's key handed on: %d exercised, want 1", n)
	}
	if n := ck.ExercisedAtClients(s+s/10, 4*s, []int{1}); n != 0 {
		t.Errorf("a client that held nothing at the fault: %d exercised, want 0", n)
	}
	kept := []Acquire{{Key: 2, Client: 0, Done: s, Used: 5 * s}, {Key: 2, Client: 1, Done: 5*s + 1, Used: 6 * s}}
	ck = Findings{Acquired: kept}
	if n := ck.ExercisedAtClients(s+s/10, 4*s, []int{0}); n != 0 {
		t.Errorf("the key waited for its holder's release: %d exercised, want 0", n)
	}
	// ...yet the fault met that holder: held, not handed on (a session
	// lock under a paused holder).
	if n := ck.HeldAtClients(s+s/10, []int{0}); n != 1 {
		t.Errorf("held at the pause: %d, want the holder's 1", n)
	}
	if n := ck.HeldAtClients(s+s/10, []int{1}); n != 0 {
		t.Errorf("held at the pause by client 1: %d, want 0", n)
	}
	ck = Findings{Acquired: short}
	if n := ck.HeldAtServer(s+s/10, 0); n != 1 {
		t.Errorf("short holds at the crash: %d held, want 1 (exercised 0)", n)
	}
	if n := ck.HeldAtServer(s+s/10, 2*s); n != 0 {
		t.Errorf("held at the crash, granted before the lag: %d, want 0", n)
	}
}
