package check

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sections is a history written by hand, one critical section a line.
func sections(rows ...Op) []Op { return rows }

// overlapping is the crash story on one key: two holders read 5 and both
// write 6, while key 1 goes on cleanly.
func overlapping() []Op {
	return sections(
		Op{Key: 0, Client: 0, Begin: 0, End: 10, Read: 0, Outcome: Written},
		Op{Key: 0, Client: 1, Begin: 20, End: 30, Read: 1, Outcome: Written},
		Op{Key: 1, Client: 0, Begin: 5, End: 15, Read: 0, Outcome: Written},
		Op{Key: 0, Client: 0, Begin: 40, End: 60, Read: 2, Outcome: Written},
		Op{Key: 0, Client: 1, Begin: 45, End: 65, Read: 2, Outcome: Written}, // a second holder
		Op{Key: 0, Client: 0, Begin: 70, End: 80, Read: 3, Outcome: Written},
	)
}

func TestLinearizabilityVerdicts(t *testing.T) {
	clean := sections(
		Op{Key: 0, Client: 0, Begin: 0, End: 10, Read: 0, Outcome: Written},
		Op{Key: 0, Client: 1, Begin: 20, End: 30, Read: 1, Outcome: Written},
		// A stale fenced write changes nothing; a skipped write neither.
		Op{Key: 0, Client: 0, Begin: 25, End: 50, Read: 1, Outcome: Refused},
		Op{Key: 0, Client: 1, Begin: 55, End: 60, Read: 2, Outcome: Skipped},
		Op{Key: 0, Client: 1, Begin: 61, End: 62, Read: 2, Outcome: Written},
	)
	// A write whose answer never came may have landed (the next reader
	// saw 2)…
	landed := sections(
		Op{Key: 0, Client: 0, Begin: 0, End: 10, Read: 0, Outcome: Written},
		Op{Key: 0, Client: 1, Begin: 20, End: OpenEnd, Read: 1, Outcome: Unknown},
		Op{Key: 0, Client: 0, Begin: 40, End: 50, Read: 2, Outcome: Written},
	)
	// …or not (the next reader saw 1): both are explained.
	lost := sections(
		Op{Key: 0, Client: 0, Begin: 0, End: 10, Read: 0, Outcome: Written},
		Op{Key: 0, Client: 1, Begin: 20, End: OpenEnd, Read: 1, Outcome: Unknown},
		Op{Key: 0, Client: 0, Begin: 40, End: 50, Read: 1, Outcome: Written},
	)
	for name, tc := range map[string]struct {
		ops  []Op
		want string
		key  uint64
	}{
		"clean": {clean, Linearizable, 0}, "unknown landed": {landed, Linearizable, 0}, "unknown lost": {lost, Linearizable, 0},
		"two overlapping increments": {overlapping(), NotLinearizable, 0},
	} {
		j := CheckLinearizable(tc.ops, time.Minute)
		if j.Verdict != tc.want || j.Operations != len(tc.ops) {
			t.Errorf("%s: %+v, want %s", name, j.Linearizability, tc.want)
		}
		if tc.want == NotLinearizable && (j.Key == nil || *j.Key != tc.key) {
			t.Errorf("%s: failing key %v, want %d", name, j.Key, tc.key)
		}
	}
}

// A budget spent before the check ends is "unknown", with why and on what.
func TestLinearizabilityBudget(t *testing.T) {
	j := CheckLinearizable(overlapping(), -time.Second)
	if j.Verdict != UnknownVerdict || j.Key == nil || !strings.Contains(j.Reason, "budget") || j.Keys != 2 {
		t.Errorf("spent budget: %+v", j.Linearizability)
	}
}

// The failing key's history is drawn as a self-contained page naming both
// holders' operations; a linearizable history draws nothing. With
// LOCKBENCH_HISTORY_EXAMPLE_DIR set the page is kept there, for the
// browser check (report/testdata/render-check.sh --history).
func TestVisualizeFailingKey(t *testing.T) {
	var b bytes.Buffer
	j := CheckLinearizable(overlapping(), time.Minute)
	wrote, err := j.Visualize(&b)
	if err != nil || !wrote {
		t.Fatalf("visualize: %v, %v", wrote, err)
	}
	page := b.String()
	if !strings.Contains(page, "<html") || strings.Count(page, "read 2, wrote 3") != 2 {
		t.Errorf("page lacks the two overlapping increments of key 0:\n%.400s", page)
	}
	if dir := os.Getenv("LOCKBENCH_HISTORY_EXAMPLE_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "history.html"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.Reset()
	if wrote, err := CheckLinearizable(overlapping()[:3], time.Minute).Visualize(&b); wrote || err != nil || b.Len() > 0 {
		t.Errorf("a linearizable history was drawn: %v, %v, %d bytes", wrote, err, b.Len())
	}
}

// No section to judge is "unknown", never a pass; unanswered writes are
// counted, and after one the worker goes on in a row of its own.
func TestNothingToJudgeAndUnanswered(t *testing.T) {
	if j := CheckLinearizable(nil, time.Minute); j.Verdict != UnknownVerdict || j.Reason == "" {
		t.Errorf("empty history: %+v", j.Linearizability)
	}
	ops := sections(
		Op{Key: 0, Client: 0, Worker: 3, Begin: 0, End: OpenEnd, Read: 0, Outcome: Unknown},
		Op{Key: 0, Client: 0, Worker: 3, Begin: 20, End: 30, Read: 1, Outcome: Written},
	)
	j := CheckLinearizable(ops, time.Minute)
	if j.Verdict != Linearizable || j.Unanswered != 1 {
		t.Errorf("unanswered write that landed: %+v", j.Linearizability)
	}
	if h := history(ops); h[0].ClientId == h[1].ClientId {
		t.Errorf("after an unanswered write the worker shares its row: %d, %d", h[0].ClientId, h[1].ClientId)
	}
}

// A hold log entry's outcome is one of the four, or "-" (no section).
func TestHoldOutcomeParsed(t *testing.T) {
	const base = "3 100 5 200 1000000000 0.01 1 4 110 190 7 "
	for in, want := range map[string]Outcome{"w": Written, "r": Refused, "s": Skipped, "u": Unknown, "-": 0} {
		h, err := parseHold(base + in + " 0.6 1.9")
		if err != nil || h.Outcome != want || h.Read != 7 || h.Worker != 4 || h.Begin != 110 || h.End != 190 || h.ReadLast != "0.6" || h.ID != "1.9" {
			t.Errorf("%q: %+v, %v", in, h, err)
		}
	}
	if h, err := parseHold(base + "s - -"); err != nil || h.ReadLast != "" || h.ID != "" {
		t.Errorf("empty ids: %+v, %v", h, err)
	}
	for _, bad := range []string{"x - -", "wr - -", "w"} {
		if _, err := parseHold(base + bad); err == nil {
			t.Errorf("outcome %q accepted", bad)
		}
	}
}
