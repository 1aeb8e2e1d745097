package results

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/internal/redistest"
)

// hdrJar is HdrHistogram's Java jar (Debian: libhdrhistogram-java), or
// $HDRHISTOGRAM_JAR.
func hdrJar() (java, jar string, missing error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", "", errors.New("java not installed (apt-get install default-jre-headless)")
	}
	jar = os.Getenv("HDRHISTOGRAM_JAR")
	if jar == "" {
		jar = "/usr/share/java/hdrhistogram.jar"
	}
	if _, err := os.Stat(jar); err != nil {
		return "", "", fmt.Errorf("HdrHistogram jar %s not found (apt-get install libhdrhistogram-java, or set HDRHISTOGRAM_JAR)", jar)
	}
	return java, jar, nil
}

var javaTotals = regexp.MustCompile(`#\[Max\s*=\s*([0-9.]+),\s*Total count\s*=\s*([0-9]+)\]`)

// TestHlogReadByJavaLogProcessor: the .hlog files lockbench writes (streamed
// by the recorder, and rewritten by WriteIntervalLog from tagged logs of
// older versions) are read by HdrHistogram's reference
// HistogramLogProcessor as they are, without -tag, with every value.
func TestHlogReadByJavaLogProcessor(t *testing.T) {
	java, jar, missing := hdrJar()
	redistest.RequireTool(t, missing)
	dir := t.TempDir()

	// The recorder's stream: three 1 s intervals, 1..300 µs.
	streamed := filepath.Join(dir, "cell.acquire.hlog")
	f, err := os.Create(streamed)
	must(t, err)
	start := time.Unix(1_800_000_000, 0)
	rec := NewRecorder(2, start)
	must(t, rec.LogTo(Acquire, f, start))
	for sec := range 3 {
		for i := 1; i <= 100; i++ {
			rec.Record(i, Acquire, time.Duration(sec*100+i)*time.Microsecond)
		}
		rec.Flush(start.Add(time.Duration(sec+1) * time.Second))
	}
	must(t, f.Close())

	// A log rewritten from intervals that carry an old tag.
	rewritten := filepath.Join(dir, "merged.release.hlog")
	var ivs []*hdrhistogram.Histogram
	for sec := range 2 {
		h := NewHistogram()
		for i := 1; i <= 50; i++ {
			_ = h.RecordValue(int64(1000 + i))
		}
		h.SetStartTimeMs(start.UnixMilli() + int64(sec)*1000)
		h.SetEndTimeMs(start.UnixMilli() + int64(sec+1)*1000)
		h.SetTag(MetricRelease)
		ivs = append(ivs, h)
	}
	g, err := os.Create(rewritten)
	must(t, err)
	must(t, WriteIntervalLog(g, MetricRelease, ivs))
	must(t, g.Close())

	for _, c := range []struct {
		path  string
		count int64
		max   float64
	}{{streamed, 300, 300}, {rewritten, 100, 1050}} {
		var out, errOut bytes.Buffer
		cmd := exec.Command(java, "-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", c.path, "-outputValueUnitRatio", "1")
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil || errOut.Len() > 0 {
			t.Fatalf("HistogramLogProcessor -i %s: %v\n%s", filepath.Base(c.path), err, errOut.String())
		}
		m := javaTotals.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("%s: no totals in the processor's output:\n%s", filepath.Base(c.path), out.String())
		}
		maxV, _ := strconv.ParseFloat(m[1], 64)
		count, _ := strconv.ParseInt(m[2], 10, 64)
		// HDR buckets at 3 significant digits: the max is exact to 0.1%.
		if count != c.count || maxV < c.max || maxV > c.max*1.001 {
			t.Errorf("%s: the processor read count %d max %v µs; written %d, max %v µs", filepath.Base(c.path), count, maxV, c.count, c.max)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
