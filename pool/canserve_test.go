package pool

import (
	"strings"
	"testing"

	"lockbench/plan"
)

// A topology plan knows but no package registered (this test binary
// imports no service): CanServe says so, where it dereferenced nil before.
func TestCanServeWithoutItsService(t *testing.T) {
	err := CanServe(plan.Cell{Settings: plan.Defaults()})
	if err == nil || !strings.Contains(err.Error(), "no lock service registered") {
		t.Fatalf("CanServe = %v; want no lock service registered", err)
	}
}
