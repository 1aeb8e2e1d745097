package pool

import (
	"testing"
	"time"

	"lockbench/workloads"
)

// spin burns about d of this process's CPU.
func spin(d time.Duration) {
	until := workloads.ProcessCPU() + d
	x := 0
	for workloads.ProcessCPU() < until {
		for i := 0; i < 100000; i++ {
			x += i
		}
	}
	_ = x
}

// Goroutines started under the proxy label are counted apart from the
// rest of the process, and their children too.
func TestProxyCPUByLabel(t *testing.T) {
	var p proxyProfile
	if !p.start() {
		t.Skip("a CPU profile is already running")
	}
	done := make(chan struct{})
	WithProxyLabel(func() {
		go func() { // a child of a labelled goroutine
			defer close(done)
			c := make(chan struct{})
			go func() { spin(300 * time.Millisecond); close(c) }()
			<-c
		}()
	})
	<-done
	spin(300 * time.Millisecond) // unlabelled
	secs, ok := p.stop()
	if !ok {
		t.Fatal("no CPU figures in the profile")
	}
	// 100 Hz sampling: 0.3 s is about 30 samples, loose bounds.
	if secs < 0.1 || secs > 0.5 {
		t.Errorf("labelled CPU %.2fs, want about 0.3s of the 0.6s burnt", secs)
	}
}
