package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The outcomes a need may ask to hold under a fault, one definition each
// for every design (the page states them: outcomeWords).
const (
	NoOverlap    = "no-overlap"     // exclusion never broken
	NoLostUpdate = "no-lost-update" // no update lost or stale
	UpIn         = "up-in-"         // unavailable at most a duration (up-in-5s)
)

// Need is one outcome asked of a lock under one fault.
type Need struct {
	Outcome string        `json:"outcome"` // NoOverlap, NoLostUpdate or "up-in"
	Fault   string        `json:"fault"`
	Within  time.Duration `json:"within,omitempty"` // up-in's bound
}

// String is the need as the flag says it.
func (n Need) String() string {
	if n.Outcome == "up-in" {
		return UpIn + n.Within.String() + ":" + n.Fault
	}
	return n.Outcome + ":" + n.Fault
}

// Words is the need in a sentence's words.
func (n Need) Words() string {
	switch n.Outcome {
	case NoOverlap:
		return "no overlap under " + n.Fault
	case NoLostUpdate:
		return "no lost update under " + n.Fault
	}
	return fmt.Sprintf("available again within %s after %s", n.Within, n.Fault)
}

// Needs are what a user asks of a lock: a fencing token (or a guarded
// write), outcomes under named faults, and an acquire p99 bound on the
// price cell (0: none).
type Needs struct {
	Fencing bool   `json:"fencing,omitempty"`
	Under   []Need `json:"under,omitempty"`
	// SafeUnder is an older plan's: no lost update under each fault.
	SafeUnder []string      `json:"safe_under,omitempty"`
	P99       time.Duration `json:"p99,omitempty"`
}

// NeedHelp is --need's help, shared by choose and report.
const NeedHelp = "what you need of the lock (comma-separated): fencing; no-overlap:FAULT (exclusion never broken); " +
	"no-lost-update:FAULT (or just FAULT); up-in-DURATION:FAULT (available again within it, e.g. up-in-5s:leader-kill)"

// ParseNeeds reads --need's items against the faults a matrix runs.
func ParseNeeds(items []string, p99 time.Duration, faults []string) (Needs, error) {
	n := Needs{P99: p99}
	if p99 < 0 {
		return n, fmt.Errorf("p99: %v is not accepted; use a positive duration such as 10ms", p99)
	}
	var run []string
	for _, f := range faults {
		if f != "none" {
			run = append(run, f)
		}
	}
	bad := func(item, what string) error {
		return fmt.Errorf("need: %q %s; use fencing, no-overlap:FAULT, no-lost-update:FAULT or up-in-DURATION:FAULT with a fault this matrix runs (%s)",
			item, what, strings.Join(run, ", "))
	}
	for _, item := range items {
		outcome, fault, ok := strings.Cut(item, ":")
		if !ok {
			outcome, fault = NoLostUpdate, item
		}
		if item == "fencing" {
			n.Fencing = true
			continue
		}
		if !slices.Contains(run, fault) {
			return n, bad(item, "names no fault of this matrix")
		}
		need := Need{Outcome: outcome, Fault: fault}
		switch {
		case outcome == NoOverlap || outcome == NoLostUpdate:
		case strings.HasPrefix(outcome, UpIn):
			d, err := time.ParseDuration(strings.TrimPrefix(outcome, UpIn))
			if err != nil || d <= 0 {
				return n, bad(item, "has no positive duration after up-in-")
			}
			need.Outcome, need.Within = "up-in", d
		default:
			return n, bad(item, "is not an outcome")
		}
		n.Under = append(n.Under, need)
	}
	return n, nil
}

// all is Under with an older plan's SafeUnder read as no lost update.
func (n Needs) all() []Need {
	out := slices.Clone(n.Under)
	for _, f := range n.SafeUnder {
		out = append(out, Need{Outcome: NoLostUpdate, Fault: f})
	}
	return out
}

// Faults are the faults the needs name, each once, in order.
func (n Needs) Faults() []string {
	var out []string
	for _, u := range n.all() {
		if !slices.Contains(out, u.Fault) {
			out = append(out, u.Fault)
		}
	}
	return out
}

// Fenced says design d's holder has a fencing token or a guarded write
// (the fencing need's one definition, for the page and for choose --quick).
func Fenced(d string) bool {
	return strings.HasSuffix(d, "-fencing") || strings.HasSuffix(d, "-guarded")
}

// Any says whether anything was asked.
func (n Needs) Any() bool { return n.Fencing || len(n.all()) > 0 || n.P99 > 0 }

// String is the needs in words.
func (n Needs) String() string {
	var out []string
	if n.Fencing {
		out = append(out, "a fencing token or guarded write")
	}
	for _, u := range n.all() {
		out = append(out, u.Words())
	}
	if n.P99 > 0 {
		out = append(out, "acquire p99 ≤ "+n.P99.String())
	}
	return strings.Join(out, ", ")
}
