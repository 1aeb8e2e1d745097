package adapter

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"sync"
	"testing"
)

// recorder is a writer that keeps every write whole.
type recorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	err    error
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	r.writes++
	return r.buf.Write(p)
}

// Lines sent from many goroutines at once arrive whole, each once, each
// sender's in its order, however the writes group them.
func TestLineWriterKeepsLinesWhole(t *testing.T) {
	const senders, each = 16, 500
	rec := &recorder{}
	lw := newLineWriter(rec, nil)
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := lw.send(&Msg{Type: TypeAcquire, ID: int64(s*each + i + 1), Key: "sender-" + strconv.Itoa(s)}); err != nil {
					t.Errorf("send: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	lw.close()
	next := map[string]int64{}
	n := 0
	sc := bufio.NewScanner(&rec.buf)
	for sc.Scan() {
		var m Msg
		if err := decodeMsg(sc.Bytes(), &m); err != nil || m.Type != TypeAcquire {
			t.Fatalf("line %d %q: %v", n, sc.Text(), err)
		}
		s, _ := strconv.Atoi(m.Key[len("sender-"):])
		if want := int64(s*each) + next[m.Key] + 1; m.ID != want {
			t.Fatalf("%s: id %d, want %d (its lines in order, each once)", m.Key, m.ID, want)
		}
		next[m.Key]++
		n++
	}
	if n != senders*each {
		t.Fatalf("%d lines arrived, want %d", n, senders*each)
	}
	t.Logf("%d lines in %d writes", n, rec.writes)
	if err := lw.send(&Msg{Type: TypeCancel}); !errors.Is(err, errWriterClosed) {
		t.Errorf("send after close: %v, want errWriterClosed", err)
	}
}

// A write that fails fails its sender and every later one.
func TestLineWriterSaysItsPipeBroke(t *testing.T) {
	broken := errors.New("broken pipe")
	lw := newLineWriter(&recorder{err: broken}, nil)
	for range 2 {
		if err := lw.send(&Msg{Type: TypeAcquire, ID: 1}); !errors.Is(err, broken) {
			t.Fatalf("send on a broken pipe: %v, want %v", err, broken)
		}
	}
}
