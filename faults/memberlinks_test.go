package faults_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"lockbench/faults"
)

// fakeMember is a consensus member the scheduler can name.
type fakeMember struct{ addr string }

func (f fakeMember) Addr() string                  { return f.addr }
func (f fakeMember) Pid() int                      { return 1 }
func (f fakeMember) Kill() error                   { return nil }
func (f fakeMember) Restart(context.Context) error { return nil }

// fakeLinks records the member-link calls in order.
type fakeLinks struct {
	mu    sync.Mutex
	calls []string
	cut   bool // what Proof answers
}

func (f *fakeLinks) log(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }
func (f *fakeLinks) Isolate(m []int) error {
	f.log("isolate " + faultsTargets(m))
	return nil
}
func (f *fakeLinks) Rejoin(m []int) error { f.log("rejoin " + faultsTargets(m)); return nil }
func (f *fakeLinks) Proof(_ context.Context, m int) (string, bool) {
	f.log("proof")
	return "member cut", f.cut
}
func (f *fakeLinks) Delay(lat, _ time.Duration) error { f.log("delay " + lat.String()); return nil }
func (f *fakeLinks) ClearDelay() error                { f.log("clear"); return nil }
func (f *fakeLinks) got() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, ", ")
}

func faultsTargets(m []int) string {
	var b strings.Builder
	for _, x := range m {
		b.WriteByte(byte('0' + x))
	}
	return b.String()
}

// A member cut from the others is proven cut before it rejoins, and only
// then did the fault take effect; one that still commits is reported
// missed. Latency on the member links is put and cleared.
func TestSchedulerMemberLinks(t *testing.T) {
	for _, cut := range []bool{true, false} {
		links := &fakeLinks{cut: cut}
		tg := faults.Targets{Masters: []faults.Master{fakeMember{"a"}, fakeMember{"b"}, fakeMember{"c"}}, Links: links, MemberDelay: links}
		specs := []faults.Spec{
			{At: 0, Kind: faults.Partition, Link: "members", Masters: []int{1}, For: 300 * time.Millisecond},
			{At: 400 * time.Millisecond, Kind: faults.Latency, Link: "members", Latency: 50 * time.Millisecond, For: 100 * time.Millisecond},
		}
		s, err := faults.NewScheduler(context.Background(), specs, tg)
		if err != nil {
			t.Fatal(err)
		}
		s.Start(time.Now(), specs)
		// Until the schedule's last call (due at 500 ms) is made, not a
		// fixed 700 ms after Start: a loaded machine runs it late.
		for deadline := time.Now().Add(10 * time.Second); !strings.HasSuffix(links.got(), "clear") && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		s.Stop()
		if got := links.got(); got != "isolate 1, proof, rejoin 1, delay 50ms, clear" {
			t.Fatalf("cut=%v: calls %q", cut, got)
		}
		if missed := s.Missed(); cut != (len(missed) == 0) {
			t.Fatalf("cut=%v: missed %v; a partition counts as applied only when proven", cut, missed)
		}
	}
	if _, err := faults.NewScheduler(context.Background(), []faults.Spec{{Kind: faults.Partition, Link: "members", Masters: []int{0}}},
		faults.Targets{Masters: []faults.Master{fakeMember{"a"}}}); err == nil {
		t.Fatal("a member partition without member links was accepted")
	}
}
