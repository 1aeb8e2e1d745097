// Package adapter is lockbench's side of the lock-client protocol: any
// program that reads and writes JSON lines on its stdin and stdout (an
// adapter around a user's lock library, in any language) is driven as a
// lock.Locker, so the worker loop, the checkers and the cell path run on it
// unchanged. docs/adapters.md is the protocol's reference; Serve is the
// adapter side for a Go Locker (the reference adapter's).
package adapter

import (
	"encoding/json"
	"fmt"
	"time"
)

// ProtocolVersion is the protocol hello names; an adapter answers hello_ok
// with the same number.
const ProtocolVersion = 1

// Message types. Requests are lockbench's (each with an id), replies the
// adapter's (each with in_reply_to), lost the adapter's own.
const (
	TypeHello    = "hello"
	TypeHelloOK  = "hello_ok"
	TypeAcquire  = "acquire"
	TypeRelease  = "release"
	TypeExtend   = "extend"
	TypeCancel   = "cancel"
	TypeGranted  = "granted"
	TypeReleased = "released"
	TypeExtended = "extended"
	TypeRefused  = "refused"
	TypeFailed   = "failed"
	TypeLost     = "lost"
	TypeError    = "error"
)

// Msg is every message's fields; each type uses some (docs/adapters.md
// has a table per type). One struct keeps the decoder to one call a line.
type Msg struct {
	Type      string `json:"type"`
	ID        int64  `json:"id,omitempty"`
	InReplyTo int64  `json:"in_reply_to,omitempty"`

	// hello
	Protocol   int             `json:"protocol,omitempty"`
	Servers    []string        `json:"servers,omitempty"`
	TTLms      int64           `json:"ttl_ms,omitempty"`
	WaitMs     *int64          `json:"wait_ms,omitempty"`
	MaxFlight  int             `json:"max_in_flight,omitempty"`
	Settings   json.RawMessage `json:"settings,omitempty"`
	Capability *Capabilities   `json:"capabilities,omitempty"`
	Library    *Library        `json:"library,omitempty"`
	Validity   *ValidityMethod `json:"validity,omitempty"`

	// acquire, release, extend, cancel, lost
	Key     string `json:"key,omitempty"`
	Token   string `json:"token,omitempty"`
	Cancels int64  `json:"cancels,omitempty"`

	// granted, extended
	ValidityMs *int64 `json:"validity_ms,omitempty"`
	DeadlineMs int64  `json:"deadline_ms,omitempty"` // the adapter's wall clock, Unix ms
	NowMs      int64  `json:"now_ms,omitempty"`      // the adapter's wall clock as it replied
	Fence      int64  `json:"fence,omitempty"`
	Attempts   int    `json:"attempts,omitempty"`
	ElapsedMs  *int64 `json:"elapsed_ms,omitempty"` // the adapter's own time for the request, shown beside lockbench's

	// refused, failed, error, lost
	Definite *bool  `json:"definite,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Code     string `json:"code,omitempty"`
}

// Library is the adapter's lock library, as hello_ok names it.
type Library struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Language string `json:"language,omitempty"`
}

// Capabilities are what the library offers beyond acquire and release.
type Capabilities struct {
	Extend     bool `json:"extend"`
	AutoExtend bool `json:"auto_extend"`
	Fence      bool `json:"fence"`
	LostNotice bool `json:"lost_notice"`
}

// ValidityMethod is how the library computes what is left of a lock:
// "drift" (TTL − elapsed − TTL×drift_factor − drift_ms, Redlock's),
// "ttl" (the TTL from the acquire's start, no drift) or "session" (held
// until lost or released).
type ValidityMethod struct {
	Method      string  `json:"method"`
	DriftFactor float64 `json:"drift_factor,omitempty"`
	DriftMs     float64 `json:"drift_ms,omitempty"`
}

// Hello is what lockbench tells an adapter before anything else: the
// servers (through the cell's proxies, so that partitions cut the
// adapter's paths), the TTL, how long an acquire may keep trying (0: one
// attempt) and the design's own settings, as the cell resolved them.
type Hello struct {
	Servers   []string
	TTL       time.Duration
	Wait      time.Duration
	MaxFlight int
	Settings  map[string]any
}

func (h Hello) msg(id int64) (Msg, error) {
	raw, err := json.Marshal(h.Settings)
	if err != nil {
		return Msg{}, fmt.Errorf("hello settings: %w", err)
	}
	wait := h.Wait.Milliseconds()
	return Msg{Type: TypeHello, ID: id, Protocol: ProtocolVersion, Servers: h.Servers, TTLms: h.TTL.Milliseconds(),
		WaitMs: &wait, MaxFlight: h.MaxFlight, Settings: raw}, nil
}

// HelloOK is the adapter's answer to hello.
type HelloOK struct {
	Library      Library
	Capabilities Capabilities
	Validity     ValidityMethod
}

// firstBytes is the start of a line as an error quotes it.
func firstBytes(line []byte) string {
	const n = 80
	if len(line) > n {
		return fmt.Sprintf("%q…", line[:n])
	}
	return fmt.Sprintf("%q", line)
}

func ms(d time.Duration) *int64 { v := d.Milliseconds(); return &v }

func boolp(b bool) *bool { return &b }
