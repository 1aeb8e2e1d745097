package check

import (
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"

	"lockbench/results"
)

// The linearizability check is an outside judge (Jepsen's rule): it reads
// only the history of the protected resource as the clients logged it,
// one operation per critical section, and asks porcupine whether some
// order of those operations, each taking effect at one instant inside its
// own [Begin, End], explains every value read. It does not look at the
// lock, the checker's counters or the engine.

// Op is one critical section on one key, as the resource saw it: the
// history read (its length and last id), and what became of the write of
// ID after it.
type Op struct {
	Key      uint64
	Client   int // the client, and its worker that held the lock
	Worker   int
	Begin    int64 // Unix ns just before the read was sent
	End      int64 // Unix ns when the write (or the decision not to write) returned; MaxInt64: never known
	Read     int64
	ReadLast string
	ID       string
	Outcome  Outcome
}

// Outcome is what became of a critical section's write.
type Outcome byte

const (
	// Written: the resource acknowledged the write of Read+1.
	Written Outcome = 'w'
	// Refused: a fenced write refused for a stale token: nothing changed.
	Refused Outcome = 'r'
	// Skipped: the client did not write (its validity had run out).
	Skipped Outcome = 's'
	// Unknown: the write was sent but its answer never came (an error or a
	// timeout): it may or may not have taken effect. The model lets it take
	// effect only where the counter still held what it read; one the
	// server ran late, over another holder's write, is a lost update the
	// resource counts and the model explains away (Unanswered says how
	// many there were).
	Unknown Outcome = 'u'
	// Final: the checker's final read of the key after the cell, no write.
	Final Outcome = 'f'
)

// outcomes are the logged outcomes, by their byte.
var outcomes = map[byte]Outcome{'w': Written, 'r': Refused, 's': Skipped, 'u': Unknown}

// state is the history of one key as far as a section sees it: its
// length and last id.
type state struct {
	n    int64
	last string
}

// model is the resource of one key, a history: a critical section reads
// it and, if it writes, appends its id. A section whose read is not the
// history at its instant is not explained: two holders that both read
// (5, x) cannot be ordered, nor can the final read of a history that lost
// an acknowledged write.
var model = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[uint64][]porcupine.Operation{}
		for _, op := range h {
			k := op.Input.(Op).Key
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(byKey))
		for _, k := range slices.Sorted(maps.Keys(byKey)) {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{state{}} },
	Step: func(st, input, _ any) []any {
		op, v := input.(Op), st.(state)
		next := state{v.n + 1, op.ID}
		switch {
		case v != state{op.Read, op.ReadLast}:
			return nil
		case op.Outcome == Written:
			return []any{next}
		case op.Outcome == Unknown:
			return []any{v, next}
		}
		return []any{v}
	},
	DescribeOperation: func(input, _ any) string {
		op := input.(Op)
		switch op.Outcome {
		case Written:
			return fmt.Sprintf("read %d, wrote %d", op.Read, op.Read+1)
		case Refused:
			return fmt.Sprintf("read %d, write %d refused (stale token)", op.Read, op.Read+1)
		case Skipped:
			return fmt.Sprintf("read %d, no write (validity ran out)", op.Read)
		case Final:
			return fmt.Sprintf("final read %d", op.Read)
		}
		return fmt.Sprintf("read %d, write %d unanswered", op.Read, op.Read+1)
	},
	DescribeState: func(st any) string {
		v := st.(state)
		return strconv.FormatInt(v.n, 10) + " (last " + orNoID(v.last) + ")"
	},
	Hash: func(st any) uint64 {
		v := st.(state)
		h := fnv.New64a()
		h.Write([]byte(v.last))
		return h.Sum64() ^ uint64(v.n)
	},
}

// Judgement is the judge's verdict on a cell's history, with the failing
// key's operations for its visualization.
type Judgement struct {
	results.Linearizability
	failing []porcupine.Operation
}

// The verdicts, as results names them.
const (
	Linearizable    = results.Linearizable
	NotLinearizable = results.NotLinearizable
	UnknownVerdict  = results.UnknownVerdict
)

// CheckLinearizable judges ops within budget, key by key in key order,
// and stops at the first key that is not linearizable.
func CheckLinearizable(ops []Op, budget time.Duration) *Judgement {
	start := time.Now()
	m := model.ToModel()
	parts := m.Partition(history(ops))
	l := &Judgement{Linearizability: results.Linearizability{Verdict: Linearizable, Operations: len(ops), Keys: len(parts), Budget: budget.Seconds()}}
	defer func() { l.Seconds = time.Since(start).Seconds() }()
	for _, op := range ops {
		if op.Outcome == Unknown {
			l.Unanswered++
		}
	}
	if len(ops) == 0 {
		l.Verdict, l.Reason = UnknownVerdict, "no critical section to judge"
		return l
	}
	for i, part := range parts {
		left := budget - time.Since(start)
		key := part[0].Input.(Op).Key
		if left <= 0 {
			l.unknown(key, fmt.Sprintf("the %v budget was spent after %d of %d keys", budget, i, l.Keys))
			return l
		}
		switch porcupine.CheckOperationsTimeout(m, part, left) {
		case porcupine.Illegal:
			l.Verdict, l.Key, l.failing = NotLinearizable, &key, part
			return l
		case porcupine.Unknown:
			l.unknown(key, fmt.Sprintf("the %v budget ran out on key %d (%d operations)", budget, key, len(part)))
			return l
		}
	}
	return l
}

func (l *Judgement) unknown(key uint64, reason string) {
	l.Verdict, l.Key, l.Reason = UnknownVerdict, &key, reason
}

// history is ops as porcupine's operations. Each worker that held a lock
// is one of porcupine's clients (a row of the visualization: one critical
// section at a time), numbered from 0 in order of appearance; after an
// unanswered write, whose section never ends, the worker goes on in a row
// of its own (Jepsen's new process).
func history(ops []Op) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	ids, next := map[[2]int]int{}, 0
	for i, op := range ops {
		who := [2]int{op.Client, op.Worker}
		id, ok := ids[who]
		if !ok {
			id, next = next, next+1
			ids[who] = id
		}
		if op.Outcome == Unknown {
			delete(ids, who)
		}
		out[i] = porcupine.Operation{ClientId: id, Input: op, Call: op.Begin, Return: op.End}
	}
	return out
}

// Failing reports whether a key's history was found not linearizable.
func (l *Judgement) Failing() bool { return l.failing != nil }

// Visualize writes porcupine's page of the failing key's history (a
// self-contained HTML file); false when no key failed. Its search runs
// again, within the budget (what it found by then is drawn).
func (l *Judgement) Visualize(w io.Writer) (bool, error) {
	if !l.Failing() {
		return false, nil
	}
	var ops []Op
	for _, op := range l.failing {
		ops = append(ops, op.Input.(Op))
	}
	m := model.ToModel()
	_, info := porcupine.CheckOperationsVerbose(m, history(ops), time.Duration(l.Budget*float64(time.Second)))
	return true, porcupine.Visualize(m, info, w)
}

// OpenEnd is the End of a section whose end was never known.
const OpenEnd = math.MaxInt64

// FinalOps are the final read of every key a section touched, as sections
// of their own at time at (after every other): porcupine then judges the
// history against where it ended, as Jepsen's final read.
func FinalOps(ops []Op, final map[uint64][]string, at int64) []Op {
	var out []Op
	done := map[uint64]bool{}
	for _, op := range ops {
		if done[op.Key] {
			continue
		}
		done[op.Key] = true
		h := final[op.Key]
		out = append(out, Op{Key: op.Key, Client: -1, Worker: -1, Begin: at, End: at, Read: int64(len(h)), ReadLast: LastID(h), Outcome: Final})
	}
	return out
}
