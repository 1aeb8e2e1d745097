package report

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"lockbench/internal/fsyncprobe"
)

// committedWhichLock is the committed lockbench choose run (README's
// which-lock table comes from it).
const committedWhichLock = "../docs/which-lock"

var (
	cellTD     = regexp.MustCompile(`<td class="(\w+)" title="[^"]*">(?:<a href="[^"]*">)?([^<]*)`)
	brokenRuns = regexp.MustCompile(`(overlap|lost) (\d+) of (\d+)`)
	renderedBy = regexp.MustCompile(`this page rendered by lockbench (\S+?)\.<`)
)

// colourAgrees says how a cell's colour disagrees with its text ("": it
// agrees): red only with data lost in some run, yellow only with exclusion
// broken and no data lost, green only with neither in every run and
// enough runs to settle it at the max rate (else pale: not settled), orange
// only where safety was not judged for an outage to the end, grey and
// white only for their states' words.
func colourAgrees(class, text string, maxRate float64) string {
	broken, settled := map[string]int{}, true
	for _, m := range brokenRuns.FindAllStringSubmatch(text, -1) {
		var k, n int
		fmt.Sscan(m[2], &k)
		fmt.Sscan(m[3], &n)
		broken[m[1]] = k
		settled = settled && Settled(k, n, maxRate) != ""
	}
	_, judged := broken["lost"]
	var want string
	switch {
	case text == stateNotApplicable || strings.HasPrefix(text, stateNotApplicable+": "):
		want = "na"
	case text == stateUnsupported:
		want = "ns"
	case strings.HasPrefix(text, stateNotJudged) || text == stateNotMeasured:
		want = "nj"
	case strings.HasPrefix(text, stateNotExercised):
		want = "nx" // judged nothing: never green
	case strings.Contains(text, "safety not judged") && !judged:
		want = "down"
	case !judged:
		return "no outcome in its text"
	case broken["lost"] > 0:
		want = "bad"
	case broken["overlap"] > 0:
		want = "warn"
	case !settled:
		want = "us"
	default:
		want = "ok"
	}
	if class != want {
		return fmt.Sprintf("coloured %s, its text says %s", class, want)
	}
	return ""
}

// checkPage: every cell of a which-lock page is coloured as its text
// reads, and no design it recommends shows a needed outcome broken in any
// run of a needed fault's cell (nor the fault not measured).
func checkPage(t *testing.T, w *WhichLock, page string) {
	t.Helper()
	cells := cellTD.FindAllStringSubmatch(page, -1)
	if want := len(w.Rows) * len(w.Faults); len(cells) != want {
		t.Fatalf("the page shows %d matrix cells; want %d", len(cells), want)
	}
	for i, m := range cells {
		text := html.UnescapeString(m[2])
		if why := colourAgrees(m[1], text, w.MaxRate); why != "" {
			t.Errorf("%s × %s: %q: %s", w.Rows[i/len(w.Faults)].Design, w.Faults[i%len(w.Faults)], text, why)
		}
	}
	for _, r := range w.Rows {
		if !r.Meets {
			continue
		}
		if !strings.Contains(page, "<strong>"+r.Design+"</strong>") {
			t.Errorf("%s meets the needs but the page does not name it", r.Design)
		}
		for _, need := range w.Needs.all() {
			c := r.Faults[indexOf(w.Faults, need.Fault)]
			if c.State == stateNotApplicable && c.JudgedOn == immune {
				continue // met: the hazard cannot happen (the page says why)
			}
			if c.State == stateNotApplicable && c.JudgedOn != "" {
				c = r.Faults[indexOf(w.Faults, c.JudgedOn)] // judged on the fault standing in
			}
			if c.State != stateMeasured {
				t.Errorf("%s recommended for %q, its cell %s", r.Design, need.Words(), c.State)
				continue
			}
			switch o := map[string]*Outcome{NoOverlap: c.Overlap, NoLostUpdate: c.Lost}[need.Outcome]; {
			case need.Outcome == "up-in" && (c.Down == nil || c.Down.ToEnd > 0 || c.Down.Max > need.Within.Seconds()):
				t.Errorf("%s recommended for %q, its cell reads %q", r.Design, need.Words(), c.Text())
			case need.Outcome != "up-in" && (o == nil || o.Broken > 0 || o.Max > 0):
				t.Errorf("%s recommended for %q, its cell reads %q", r.Design, need.Words(), c.Text())
			}
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return -1
}

// The synthetic matrix's page: colours agree with texts, and every single
// need recommends only designs whose cells show it held in every run.
func TestWhichLockPageAgrees(t *testing.T) {
	p := &WhichLockPlan{Designs: []string{"a", "b", "c"}, Faults: []string{"none", "crash", "pause-holder"},
		NotApplicable: map[string]map[string]string{"c": {"crash": "no server"}}}
	byCell := map[string][]run{
		"a.none": {{}, {}}, "a.crash": {{down: 1}, {down: 2}}, "a.pause-holder": {{overlap: 3}, {}},
		"b.none": {{}, {}}, "b.crash": {{lost: 1, overlap: 1, down: 0.5}, {down: 0.4}}, "b.pause-holder": {{}, {}},
		"c.none": {{}, {}}, "c.pause-holder": {{overlap: 2, lost: 2}, {overlap: 1}},
	}
	for _, needs := range needSets(p.Faults) {
		p.Needs = needs
		w := matrixOf(p, byCell)
		var b strings.Builder
		if err := w.writeHTML(&b); err != nil {
			t.Fatal(err)
		}
		checkPage(t, w, b.String())
	}
}

// needSets are every single need over faults, and all of them at once.
func needSets(faults []string) []Needs {
	var out []Needs
	var all Needs
	for _, f := range faults[1:] {
		for _, n := range []Need{{NoOverlap, f, 0}, {NoLostUpdate, f, 0}, {"up-in", f, 3 * time.Second}} {
			out = append(out, Needs{Under: []Need{n}})
			all.Under = append(all.Under, n)
		}
	}
	return append(out, all)
}

// The committed run: its page's colours agree with its texts, every
// single need recommends only what its cells show held, and report --need
// judges it again without measuring: byte for byte the same page for the
// needs it was made with, another answer for others.
func TestCommittedWhichLockAgrees(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join(committedWhichLock, "which-lock.html"))
	if err != nil {
		t.Fatalf("the committed which-lock run: %v", err)
	}
	plan, err := readWhichLockPlan(committedWhichLock)
	if err != nil || plan == nil {
		t.Fatalf("the committed run's plan: %v", err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(committedWhichLock)); err != nil {
		t.Fatal(err)
	}
	// The page names the lockbench that rendered it: render as that one.
	defer func(v string) { Version = v }(Version)
	Version = "" // none named: the one that measured
	if m := renderedBy.FindSubmatch(committed); m != nil {
		Version = string(m[1])
	}
	again := func(needs *Needs) (*WhichLock, string) {
		s, err := Build([]string{dir}, Options{OutDir: dir, Formats: []string{"json"}, Needs: needs})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "which-lock.html"))
		if err != nil {
			t.Fatal(err)
		}
		return s.WhichLock, string(b)
	}
	same := plan.Needs
	w, page := again(&same)
	if page != string(committed) {
		t.Fatalf("report --need %s on the committed run does not give its page again", same.String())
	}
	checkPage(t, w, page)
	for _, needs := range needSets(plan.Faults) {
		w, page := again(&needs)
		checkPage(t, w, page)
	}
	other := Needs{Under: []Need{{NoOverlap, "pause-holder", 0}}}
	if _, page := again(&other); page == string(committed) {
		t.Error("other needs give the same page")
	}
}

// Two kinds of "not applicable" on the committed run: immune meets a need
// and says why (an advisory lock and a clock jump); no such part is judged
// on the fault standing in, and the reason says so (one master's leader
// kill is its crash).
func TestNotApplicableImmuneOrStandIn(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(committedWhichLock)); err != nil {
		t.Fatal(err)
	}
	judge := func(needs Needs) *WhichLock {
		s, err := Build([]string{dir}, Options{OutDir: dir, Formats: []string{"json"}, Needs: &needs})
		if err != nil {
			t.Fatal(err)
		}
		return s.WhichLock
	}
	w := judge(Needs{SafeUnder: []string{"clock-jump"}})
	for _, d := range []string{"postgres", "postgres-guarded", "postgres-replica", "postgres-replica-guarded"} {
		i := slices.IndexFunc(w.Rows, func(r MatrixRow) bool { return r.Design == d })
		if !slices.Contains(w.Recommend, d) || i < 0 || len(w.Rows[i].MetBy) != 1 || !strings.Contains(w.Rows[i].MetBy[0], "immune (an advisory lock has no expiry") {
			t.Errorf("--need clock-jump: %s not recommended as immune (recommended %v)", d, w.Recommend)
		}
	}
	w = judge(Needs{SafeUnder: []string{"leader-kill"}})
	for _, r := range w.Rows {
		if r.Design == "single" && (r.Meets || !strings.Contains(strings.Join(r.Reasons, ";"), "judged on crash: updates lost in 5 of 5 events")) {
			t.Errorf("single under leader-kill: meets %v, reasons %q; want its crash's lost updates", r.Meets, r.Reasons)
		}
	}
}

// The page states the run's facts: every server version its cells ran
// on, each design's persistence, the disk's fsync latency when the run
// probed it (and says when it did not), and the lockbench that rendered
// it when another than the one that measured.
func TestWhichLockFacts(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(committedWhichLock)); err != nil {
		t.Fatal(err)
	}
	facts := func() string {
		s, err := Build([]string{dir}, Options{OutDir: dir, Formats: []string{"json"}})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(s.WhichLock.Facts(), "\n")
	}
	defer func(v string) { Version = v }(Version)
	Version = "abc123"
	f := facts()
	for _, want := range []string{"redis-server 7.0.15", "etcd 3.4.23", "zookeeper 3.8.0", "PostgreSQL 15", "single-aof-always aof-always", "etcd-no-fsync no-fsync",
		"Disk: write+fsync of 4 KiB: median 239µs, p99 556µs (200 writes in /tmp).", "lockbench 0c2a58703acb, go1.26.8", "rendered by lockbench abc123"} {
		if !strings.Contains(f, want) {
			t.Errorf("facts lack %q:\n%s", want, f)
		}
	}
	p, err := readWhichLockPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	p.Fsync = &fsyncprobe.Result{Dir: "/tmp", Writes: 200, Size: 4096, Median: 1500 * time.Microsecond, P99: 4 * time.Millisecond}
	b, _ := json.Marshal(p)
	if err := os.WriteFile(filepath.Join(dir, WhichLockFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if f := facts(); !strings.Contains(f, "Disk: write+fsync of 4 KiB: median 1.5ms, p99 4ms (200 writes in /tmp).") {
		t.Errorf("facts do not give the probe:\n%s", f)
	}
}
