package runner

import (
	"context"
	"os"
	"testing"

	"lockbench/chaos"
	"lockbench/plan"
	"lockbench/results"
)

// faultClientEnv makes the test binary act as a chaos client process, as
// `lockbench chaos __client` does.
const faultClientEnv = "LOCKBENCH_CHAOS_TEST_CLIENT"

func TestMain(m *testing.M) {
	if os.Getenv(faultClientEnv) == "1" {
		os.Exit(chaos.ClientMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// faultOptions run a fault scenario without a results directory, starting
// client processes from this test binary.
func faultOptions(t *testing.T) Options {
	return Options{Scenario: "test", Log: t.Output(), ClientCommand: []string{os.Args[0]}, ClientEnv: []string{faultClientEnv + "=1"}}
}

// faultScenario parses doc as a fault scenario of one cell.
func faultScenario(t *testing.T, doc string) (*plan.Scenario, []plan.Cell) {
	t.Helper()
	sc, err := plan.Parse(t.Name()+".yaml", []byte(doc), true)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 1 {
		t.Fatalf("%d cells, want 1", len(cells))
	}
	return sc, cells
}

// runFaultScenario runs the scenario's one cell and returns its result;
// an error, or a cell that failed, fails the test.
func runFaultScenario(t *testing.T, ctx context.Context, sc *plan.Scenario, cells []plan.Cell, opt Options) *CellResult {
	t.Helper()
	out, err := Run(ctx, sc, cells, opt)
	if err != nil {
		t.Fatal(err)
	}
	if out.Err != nil {
		t.Fatalf("cell %s: %v", out.FailedCell, out.Err)
	}
	if len(out.Cells) != 1 || out.Cells[0].Last == nil {
		t.Fatalf("%d cells measured, want 1 with a result", len(out.Cells))
	}
	return out.Cells[0].Last
}

// faultChecks are the checkers' figures of a fault cell's result.
func faultChecks(t *testing.T, r *CellResult) results.ChaosChecks {
	t.Helper()
	cc := r.Run.Config
	if cc == nil || cc.ChaosConfig == nil {
		t.Fatal("the result has no chaos config (checks)")
	}
	return cc.ChaosConfig.Checks
}
