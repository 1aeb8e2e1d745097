package engine

import (
	"sync"
	"testing"
	"time"
)

// Many callers push at once while the dispatcher takes: every request
// comes out once, each caller's in the order it pushed them (the order a
// key's commands reach its master), and after close the dispatcher drains
// what was queued, then stops, and later pushes fail.
func TestQueueKeepsEachCallersOrderAndDrainsOnClose(t *testing.T) {
	const callers, each = 8, 5_000 // fewer than maxQueued in all
	q := newQueue()
	var wg sync.WaitGroup
	for p := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := &request{master: p, deadline: time.Unix(int64(i), 0)}
				if !q.push(r) {
					t.Errorf("caller %d: push %d refused before close", p, i)
					return
				}
			}
		}()
	}
	got := make(chan []*request)
	go func() {
		var all, spare []*request
		for {
			batch, ok := q.take(spare)
			if !ok {
				got <- all
				return
			}
			all = append(all, batch...)
			spare = batch[:0]
		}
	}()
	wg.Wait()
	q.close()
	all := <-got
	if len(all) != callers*each {
		t.Fatalf("took %d requests, want %d", len(all), callers*each)
	}
	next := make([]int64, callers)
	for _, r := range all {
		if seq := r.deadline.Unix(); seq != next[r.master] {
			t.Fatalf("caller %d: request %d came out where %d was due", r.master, seq, next[r.master])
		}
		next[r.master]++
	}
	if q.push(&request{}) {
		t.Fatal("push after close accepted: nobody would answer it")
	}
}

// A queue maxQueued deep refuses more (a master that far behind fails
// fast), and takes again once the dispatcher has emptied it.
func TestQueueRefusesPastMaxQueued(t *testing.T) {
	q := newQueue()
	for i := range maxQueued {
		if !q.push(&request{}) {
			t.Fatalf("push %d refused below the bound", i)
		}
	}
	if q.push(&request{}) {
		t.Fatalf("push %d accepted past the bound", maxQueued+1)
	}
	if batch, _ := q.take(nil); len(batch) != maxQueued {
		t.Fatalf("took %d, want %d", len(batch), maxQueued)
	}
	if !q.push(&request{}) {
		t.Fatal("push refused after the backlog was taken")
	}
}
