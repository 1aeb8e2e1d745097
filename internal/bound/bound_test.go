package bound

import (
	"testing"
	"time"
)

func TestMaxMin(t *testing.T) {
	if !Max(t, "a b", 2*time.Millisecond, 3*time.Millisecond) || Max(t, "x", 4, 3) {
		t.Error("Max: 2ms <= 3ms must hold, 4 <= 3 must not")
	}
	if !Min(t, "y", 1.5, 1.5) || Min(t, "z", 0, 1) {
		t.Error("Min: 1.5 >= 1.5 must hold, 0 >= 1 must not")
	}
	if got := clean("a b c"); got != "a_b_c" {
		t.Errorf("clean: %q", got)
	}
}
