package results

import (
	"encoding/json"
	"testing"
)

// TestTallyKeepsTheFileShape: the one outcome count is embedded in the
// views that carry it, so a result's outcomes keep the keys they had when
// each view spelt them out (old files read, new files read by old tools;
// a client's per_client row gains few_acks, no key goes), and a failed
// acquire is counted under the key its reason names.
func TestTallyKeepsTheFileShape(t *testing.T) {
	var tl Tally
	tl.Acquired = 5
	for _, why := range []AcquireFailure{LostToContention, LostToContention, LostToError, LostUnconfirmed} {
		tl.Failed(why)
	}
	if tl.Attempts() != 9 || tl.NotAcquired != 2 || tl.Errors != 1 || tl.Unconfirmed != 1 {
		t.Fatalf("tally %+v, attempts %d", tl, tl.Attempts())
	}
	b, err := json.Marshal(Outcomes{Tally: tl, PerMaster: map[string]MasterOutcomes{}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"acquired":5,"not_acquired":2,"errors":1,"few_acks":1,"per_master":{}}`
	if string(b) != want {
		t.Errorf("outcomes\n got %s\nwant %s", b, want)
	}
	var back Outcomes
	if err := json.Unmarshal([]byte(want), &back); err != nil || back.Tally != tl {
		t.Errorf("read back %+v (%v), want %+v", back.Tally, err, tl)
	}
}
