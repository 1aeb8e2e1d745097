package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
)

// stockCells runs the shipped stock scenario with extra flags and returns
// its exit code, each cell's strategy, stock left and callers that gave
// up, and the end of what it printed (for a failure's message).
func stockCells(t *testing.T, extra ...string) (int, map[string][2]float64, string) {
	t.Helper()
	redistest.Require(t)
	out := filepath.Join(t.TempDir(), "res")
	stdout, stderr, code := lockbench(t, append([]string{"chaos", "-f", "stock", "--no-report", "--out", out}, extra...)...)
	var man struct{ Cells []struct{ File string } }
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, "manifest.json"))), &man); err != nil {
		t.Fatalf("manifest: %v\n%s\n%s", err, stdout, stderr)
	}
	cells := map[string][2]float64{}
	for _, c := range man.Cells {
		var run struct {
			Config struct {
				WaitStrategy string `json:"wait_strategy"`
			}
			Safety struct {
				StockLeft *float64 `json:"stock_left"`
			}
			Contention struct {
				GaveUp float64 `json:"gave_up"`
			}
		}
		if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, c.File))), &run); err != nil || run.Safety.StockLeft == nil {
			t.Fatalf("%s: %v, stock left %v", c.File, err, run.Safety.StockLeft)
		}
		cells[run.Config.WaitStrategy] = [2]float64{*run.Safety.StockLeft, run.Contention.GaveUp}
	}
	if !strings.Contains(stderr, "stock left") {
		t.Errorf("the terminal does not say what stock is left:\n%s", stderr)
	}
	return code, cells, tail(stderr, 20)
}

// tail is s's last n lines.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Seed 003's test: 50 callers, each one call with tryLock(2s, 5s), a stock
// of 100: exactly 50 left, for every wait strategy.
func TestStockEndsAt50ForEveryStrategy(t *testing.T) {
	code, cells, out := stockCells(t)
	if code != 0 {
		t.Fatalf("exit %d, want 0; cells (stock left, gave up) %v; it printed:\n%s", code, cells, out)
	}
	for _, s := range engine.WaitStrategies {
		c, ok := cells[s]
		if !ok {
			t.Errorf("the stock scenario has no cell with wait_strategy %s", s)
			continue
		}
		if c[0] != 50 || c[1] != 0 {
			t.Errorf("%s: stock left %v, %v gave up; want 50 and 0", s, c[0], c[1])
		}
	}
}

// The check can fail: with a wait shorter than a hold, callers give up,
// the stock stays above 50, and the cell says so (exit 3).
func TestStockFailsWhenCallersGiveUp(t *testing.T) {
	code, cells, out := stockCells(t, "--wait-time", "1ms", "--hold", "20ms", "--min-acquisitions", "1")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (expectations not met); it printed:\n%s", code, out)
	}
	for s, c := range cells {
		if c[0] <= 50 || c[1] == 0 || !slices.Contains(engine.WaitStrategies, s) {
			t.Errorf("%s: stock left %v, %v gave up; want above 50 and some", s, c[0], c[1])
		}
	}
}
