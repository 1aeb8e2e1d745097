package check

import (
	"slices"
	"strings"
)

// The protected resource is a history per key, not a counter (Jepsen's
// list-append): each write puts a unique write id right after the history
// its writer read, and logs what it read (the history's length and last
// id). After the cell one final read of every key's history, from wherever
// it lives then (the resource's server; a guarded write's lock service as
// it stands after the fault), shows per key what no counter can:
//
//   - lost: an acknowledged write missing from the final history, whatever
//     was in doubt;
//   - stale accepted: a write in the final history whose read was not the
//     history just before it there (or a refused write found in it);
//   - in doubt: writes whose answer never came, present or absent, counted
//     apart, neither safe nor lost.
//
// A store keeps the history its own way (a Redis list; a text value of ids
// separated by spaces in a lock service); a write keeps the first entries
// it read (at most as many as there are now) and appends its id, which is
// "read plus my id" whenever the write is not stale.

// NoID is a logged id that is empty: a read of an empty history, a hold
// with no write.
const NoID = "-"

// ParseHistory is a history kept as text, its ids separated by spaces.
func ParseHistory(s string) []string { return strings.Fields(s) }

// AppendID is the text of history s with id appended.
func AppendID(s, id string) string {
	if s == "" {
		return id
	}
	return s + " " + id
}

// LastID is the last id of a history ("" when empty).
func LastID(h []string) string {
	if len(h) == 0 {
		return ""
	}
	return h[len(h)-1]
}

// Writes is what the final histories say of the logged writes.
type Writes struct {
	Acknowledged int64 `json:"acknowledged"`
	// Lost are acknowledged writes missing from the final history;
	// StaleAccepted are writes found there after a history other than the
	// one they read (or found there though refused).
	Lost          int64 `json:"lost"`
	StaleAccepted int64 `json:"stale_accepted"`
	// InDoubt are writes whose answer never came; InDoubtLanded of them
	// are in the final history.
	InDoubt       int64 `json:"in_doubt"`
	InDoubtLanded int64 `json:"in_doubt_landed"`
	Refused       int64 `json:"refused"`
	// Unlogged are ids in a final history that no logged write made (a
	// client's log lost): the history check cannot place them.
	Unlogged int64 `json:"unlogged,omitempty"`
	// FinalLength is the final histories' entries, all keys together.
	FinalLength int64 `json:"final_length"`
	// LostIDs and StaleIDs are the first few of each, as evidence.
	LostIDs  []string `json:"lost_ids,omitempty"`
	StaleIDs []string `json:"stale_ids,omitempty"`
	// LostAt and RefusedAt are when each lost write was acknowledged and
	// each refused one answered (Unix ns), for the cell's timeline;
	// StaleAt when each stale accepted write was answered (0: an id found
	// twice in a final history, which no answer dates).
	LostAt    []int64 `json:"-"`
	RefusedAt []int64 `json:"-"`
	StaleAt   []int64 `json:"-"`
}

// evidence is how many ids of each kind a result keeps.
const evidence = 10

// CheckHistories judges the logged writes (ops) against the final history
// of each key (final, by key; a key missing from it has an empty history).
func CheckHistories(ops []Op, final map[uint64][]string) Writes {
	var w Writes
	type place struct {
		key uint64
		pos int
	}
	at := map[string]place{}
	for key, h := range final {
		w.FinalLength += int64(len(h))
		for p, id := range h {
			if _, dup := at[id]; dup {
				w.stale(id, 0) // an id twice: a write applied twice
				continue
			}
			at[id] = place{key, p}
		}
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if op.ID == "" || op.Outcome == 0 || op.Outcome == Skipped {
			continue
		}
		seen[op.ID] = true
		p, landed := at[op.ID]
		landed = landed && p.key == op.Key
		switch op.Outcome {
		case Written:
			w.Acknowledged++
			switch {
			case !landed:
				w.Lost++
				w.LostAt = append(w.LostAt, op.End)
				if len(w.LostIDs) < evidence {
					w.LostIDs = append(w.LostIDs, op.ID)
				}
			case !readBefore(op, final[op.Key], p.pos):
				w.stale(op.ID, op.End)
			}
		case Unknown:
			w.InDoubt++
			if landed {
				w.InDoubtLanded++
			}
		case Refused:
			w.Refused++
			w.RefusedAt = append(w.RefusedAt, op.End)
			if landed {
				w.stale(op.ID, op.End)
			}
		}
	}
	for id := range at {
		if !seen[id] {
			w.Unlogged++
		}
	}
	return w
}

// readBefore says op read the history just before position pos of h.
func readBefore(op Op, h []string, pos int) bool {
	return op.Read == int64(pos) && op.ReadLast == LastID(h[:pos])
}

func (w *Writes) stale(id string, at int64) {
	w.StaleAccepted++
	w.StaleAt = append(w.StaleAt, at)
	if len(w.StaleIDs) < evidence && !slices.Contains(w.StaleIDs, id) {
		w.StaleIDs = append(w.StaleIDs, id)
	}
}
