package metrics

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// DashboardFile is the shipped Grafana dashboard.
const dashboardFile = "../deploy/grafana/lockbench.json"

// DashboardQueries are the PromQL expressions of a Grafana dashboard's
// panels and its variable queries.
func dashboardQueries(t *testing.T, path string) (exprs, variables []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s is not valid JSON: %v", path, err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["expr"].(string); ok {
				exprs = append(exprs, e)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc["panels"])
	if tl, ok := doc["templating"].(map[string]any); ok {
		for _, v := range tl["list"].([]any) {
			if q, ok := v.(map[string]any)["query"].(string); ok && strings.Contains(q, "lockbench_") {
				variables = append(variables, q)
			}
		}
	}
	return exprs, variables
}

// exportedTypes gathers every family an exporter serves, by name.
func exportedTypes(t *testing.T) map[string]dto.MetricType {
	e := New(Options{Version: "test"})
	exercise(e.Cell(labels, []string{"m1"}))
	e.WatchMasters([]string{"m1"}, func(context.Context, string) (ServerReading, error) { return ServerReading{CPUSeconds: 1}, nil })
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dto.MetricType{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf.GetType()
	}
	return out
}

var metricName = regexp.MustCompile(`\blockbench_[a-z0-9_]+`)

// Every query of the shipped dashboard names a metric lockbench exports
// (a histogram by its _bucket, _sum or _count series), and the panels the
// issue asks for are there.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	exprs, vars := dashboardQueries(t, dashboardFile)
	if len(exprs) == 0 {
		t.Fatal("no queries found in the dashboard")
	}
	types := exportedTypes(t)
	used := map[string]bool{}
	for _, q := range append(exprs, vars...) {
		names := metricName.FindAllString(q, -1)
		if len(names) == 0 {
			t.Errorf("query names no lockbench metric: %s", q)
		}
		for _, n := range names {
			base := n
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(n, suf); ok && types[b] == dto.MetricType_HISTOGRAM {
					base = b
				}
			}
			if _, ok := types[base]; !ok || (base == n && types[n] == dto.MetricType_HISTOGRAM) {
				t.Errorf("query uses %s, which lockbench does not export as such: %s", n, q)
			}
			used[base] = true
		}
	}
	for _, want := range []string{"lockbench_cycles_total", "lockbench_acquire_seconds", "lockbench_master_replies_total",
		"lockbench_safety_violations_total", "lockbench_lost_updates_total", "lockbench_pacer_lag_seconds",
		"lockbench_time_to_lock_seconds", "lockbench_gave_up_total", "lockbench_master_cpu_seconds_total"} {
		if !used[want] {
			t.Errorf("no panel shows %s", want)
		}
	}
}
