package adapter_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lockbench/adapter"
	"lockbench/lock"
)

var updateTranscript = flag.Bool("update-transcript", false, "capture a new session with the reference adapter into docs/adapters.md")

const (
	docPath         = "../docs/adapters.md"
	transcriptBegin = "<!-- transcript: begin (go test ./adapter -run TestTranscript -update-transcript) -->\n```\n"
	transcriptEnd   = "```\n<!-- transcript: end -->"
)

// TestTranscript replays docs/adapters.md's session against the Go
// reference adapter: lockbench's lines sent as they were (the servers and
// tokens of this run put in), the adapter's answers matched by type,
// in_reply_to and fields. With -update-transcript it captures the session
// anew first.
func TestTranscript(t *testing.T) {
	addrs := masters(t, 3)
	if *updateTranscript {
		captureTranscript(t, addrs)
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := transcriptLines(t, string(doc))
	replay(t, addrs, lines)
}

// transcriptLine is one line of a session: sent by lockbench or not.
type transcriptLine struct {
	sent bool
	msg  map[string]any
}

func transcriptLines(t *testing.T, doc string) []transcriptLine {
	i, j := strings.Index(doc, transcriptBegin), strings.Index(doc, transcriptEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no transcript between its markers", docPath)
	}
	var out []transcriptLine
	for _, l := range strings.Split(strings.TrimSpace(doc[i+len(transcriptBegin):j]), "\n") {
		f := strings.SplitN(strings.TrimSpace(l), " ", 3)
		if len(f) != 3 || (f[1] != ">" && f[1] != "<") {
			t.Fatalf("transcript line %q: want TIME >|< JSON", l)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(f[2]), &m); err != nil {
			t.Fatalf("transcript line %q: %v", l, err)
		}
		out = append(out, transcriptLine{sent: f[1] == ">", msg: m})
	}
	if len(out) < 10 {
		t.Fatalf("transcript of %d lines: too short to show a session", len(out))
	}
	return out
}

// replay runs the session's steps (lines sent, then the answers that
// followed them) against a fresh reference adapter.
func replay(t *testing.T, addrs []string, lines []transcriptLine) {
	cmd := exec.Command(reference(t))
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	cmd.Stderr = t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	got := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(outPipe)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("adapter wrote a malformed line %q", sc.Text())
			}
			got <- m
		}
		close(got)
	}()
	tokens := map[string]any{}
	for len(lines) > 0 {
		n := 0
		for n < len(lines) && lines[n].sent {
			n++
		}
		m := n
		for m < len(lines) && !lines[m].sent {
			m++
		}
		for _, l := range lines[:n] {
			send(t, in, l.msg, addrs, tokens)
		}
		expect(t, got, lines[n:m], tokens)
		lines = lines[m:]
	}
}

func send(t *testing.T, in interface{ Write([]byte) (int, error) }, m map[string]any, addrs []string, tokens map[string]any) {
	m = mapsClone(m)
	if m["type"] == adapter.TypeHello {
		m["servers"] = addrs
	}
	if tok, ok := m["token"].(string); ok {
		if now, seen := tokens[tok]; seen {
			m["token"] = now
		}
	}
	b, _ := json.Marshal(m)
	if _, err := in.Write(append(b, '\n')); err != nil {
		t.Fatalf("send %s: %v", b, err)
	}
}

// expect takes as many answers as the step shows, in any order, each
// matched to one of the step's by type, in_reply_to and field names.
func expect(t *testing.T, got <-chan map[string]any, want []transcriptLine, tokens map[string]any) {
	left := slices.Clone(want)
	for range want {
		var m map[string]any
		select {
		case m = <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer within 10s; still expected %v", left)
		}
		i := slices.IndexFunc(left, func(w transcriptLine) bool { return sameShape(w.msg, m) })
		if i < 0 {
			t.Fatalf("answer %v matches none of the transcript's %v", m, left)
		}
		if tok, ok := left[i].msg["token"].(string); ok && left[i].msg["type"] == adapter.TypeGranted {
			tokens[tok] = m["token"]
		}
		left = slices.Delete(left, i, i+1)
	}
}

// sameShape: the same type, in_reply_to, reason and field names; values
// that differ from run to run (tokens, times) are not compared.
func sameShape(want, got map[string]any) bool {
	for _, k := range []string{"type", "in_reply_to", "reason", "code"} {
		if fmt.Sprint(want[k]) != fmt.Sprint(got[k]) {
			return false
		}
	}
	return slices.Equal(sortedKeys(want), sortedKeys(got))
}

// sortedKeys are m's field names but the adapter's own optional figures.
func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		if k != "attempts" && k != "elapsed_ms" {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

func mapsClone(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// captureTranscript runs the documented session through the Client and
// writes its lines into docs/adapters.md.
func captureTranscript(t *testing.T, addrs []string) {
	var buf syncBuffer
	ctx := context.Background()
	c, err := adapter.Start(ctx, adapter.Options{Argv: []string{reference(t)}, Stderr: t.Output(), Transcript: &buf,
		Hello: adapter.Hello{Servers: addrs, TTL: 2 * time.Second, Wait: 300 * time.Millisecond, MaxFlight: 16,
			Settings: map[string]any{"topology": "redlock", "mode": "multiplexed", "wait": "all", "timeout_ms": 50,
				"drift_factor": 0.01, "retry_delay_min_ms": 50, "retry_delay_max_ms": 100}}})
	if err != nil {
		t.Fatal(err)
	}
	l1 := mustAcquire(t, c, "doc:k1")
	if l, _ := c.Acquire(ctx, "doc:k1"); l != nil {
		t.Fatal("a second holder of doc:k1")
	}
	if r := c.Extend(ctx, l1, 2*time.Second); !r.OK {
		t.Fatalf("extend: %+v", r)
	}
	var wg sync.WaitGroup
	held := make([]*lock.Lock, 2)
	for i, k := range []string{"doc:k2", "doc:k3"} {
		wg.Add(1)
		go func() { defer wg.Done(); held[i] = mustAcquire(t, c, k) }()
	}
	wg.Wait()
	if r := c.Release(ctx, l1); !r.OK {
		t.Fatalf("release: %+v", r)
	}
	if r := c.Release(ctx, l1); r.OK {
		t.Fatal("a second release of doc:k1 succeeded")
	}
	if m, _, err := c.Request(ctx, adapter.Msg{Type: "frobnicate"}); err != nil || m.Type != adapter.TypeError {
		t.Fatalf("unknown request: %+v %v", m, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	if l, _ := c.Acquire(cctx, "doc:k2"); l != nil {
		t.Fatal("doc:k2 granted twice")
	}
	cancel()
	time.Sleep(300 * time.Millisecond) // its refused comes after the cancel
	for _, l := range held {
		c.Release(ctx, l)
	}
	c.Close()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(transcriptBegin)), bytes.Index(doc, []byte(transcriptEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no transcript markers", docPath)
	}
	out := slices.Concat(doc[:i+len(transcriptBegin)], []byte(buf.String()), doc[j:])
	if err := os.WriteFile(docPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustAcquire(t *testing.T, c *adapter.Client, key string) *lock.Lock {
	l, res := c.Acquire(context.Background(), key)
	if l == nil {
		t.Fatalf("acquire %s: %+v", key, res)
	}
	return l
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
