// Package sessionloss keeps a lock client's lost sessions: which session
// the service ended under it, and when the client learnt it.
package sessionloss

import (
	"sync"
	"time"

	"lockbench/results"
)

// Log is safe for concurrent use; its zero value is ready.
type Log struct {
	mu   sync.Mutex
	list []results.SessionLoss
}

// Add records that the session id was lost, learnt now (the first time
// only: a client may learn it twice, by two calls that failed).
func (l *Log) Add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.list {
		if x.ID == id {
			return
		}
	}
	l.list = append(l.list, results.SessionLoss{ID: id, LearnedAt: time.Now().UnixNano()})
}

// List is what was recorded, in order.
func (l *Log) List() []results.SessionLoss {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]results.SessionLoss(nil), l.list...)
}
