package adapter

import (
	"errors"
	"io"
	"sync"
)

// lineWriter writes messages as lines from many goroutines, both sides
// of the protocol. A sender appends its line to the queue; the first to
// find no write under way writes the whole queue in one syscall, then
// whatever others queued meanwhile, until it is empty. So an idle pipe
// gets each line at once (no timer, no hand-off to a writer goroutine),
// and a busy one many lines per write.
type lineWriter struct {
	w     io.Writer
	trace func(dir string, line []byte) // nil: none; called in wire order

	mu      sync.Mutex
	idle    sync.Cond // signalled when a write round ends
	queue   []byte    // lines not yet written
	spare   []byte    // the last round's buffer, reused
	writing bool
	closed  bool
	err     error // the first write's error; later sends fail with it
}

var errWriterClosed = errors.New("adapter: writer closed")

func newLineWriter(w io.Writer, trace func(string, []byte)) *lineWriter {
	lw := &lineWriter{w: w, trace: trace}
	lw.idle.L = &lw.mu
	return lw
}

// send writes m as a line (or queues it behind a write under way). An
// error: the pipe broke (or the writer was closed); m is not sent.
func (lw *lineWriter) send(m *Msg) error {
	lw.mu.Lock()
	if lw.closed || lw.err != nil {
		err := lw.err
		lw.mu.Unlock()
		if err == nil {
			err = errWriterClosed
		}
		return err
	}
	start := len(lw.queue)
	lw.queue = appendMsg(lw.queue, m)
	if lw.trace != nil {
		lw.trace("> ", lw.queue[start:])
	}
	if lw.writing {
		lw.mu.Unlock()
		return nil
	}
	lw.writing = true
	for len(lw.queue) > 0 && lw.err == nil {
		out := lw.queue
		lw.queue = lw.spare[:0]
		lw.mu.Unlock()
		_, err := lw.w.Write(out)
		lw.mu.Lock()
		lw.spare = out[:0]
		if err != nil {
			lw.err = err
		}
	}
	lw.writing = false
	lw.idle.Broadcast()
	err := lw.err
	lw.mu.Unlock()
	return err
}

// close waits for a write under way and refuses later sends (a lost
// notice that comes as the session ends is not written).
func (lw *lineWriter) close() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.closed = true
	for lw.writing {
		lw.idle.Wait()
	}
}
