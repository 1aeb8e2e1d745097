package plan

import "testing"

// A single hot key is every segment's (README: "a single hot key stays
// shared"); other keyspaces are split, and too few keys are refused.
func TestSegmentKeys(t *testing.T) {
	for _, tc := range []struct {
		keys    uint64
		dist    string
		segment string
		want    uint64 // keys of the segment; 0: refused
		offset  uint64
	}{
		{1, "uniform", "1/2", 1, 0},
		{1, "uniform", "2/2", 1, 0},
		{100, "single", "2/2", 100, 0},
		{10, "uniform", "2/2", 5, 5},
		{2, "uniform", "3/3", 0, 0},
	} {
		s := Defaults()
		s.Keys, s.Distribution, s.Segment, s.Workers = tc.keys, tc.dist, tc.segment, 4
		out, off, err := s.ForSegment()
		switch {
		case tc.want == 0 && err == nil:
			t.Errorf("keys %d %s segment %s: accepted (%d keys), want refused", tc.keys, tc.dist, tc.segment, out.Keys)
		case tc.want != 0 && (err != nil || out.Keys != tc.want || off != tc.offset):
			t.Errorf("keys %d %s segment %s: %d keys at %d (%v), want %d at %d", tc.keys, tc.dist, tc.segment, out.Keys, off, err, tc.want, tc.offset)
		}
	}
}
