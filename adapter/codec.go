package adapter

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The codec is encoding/json's wire format, exactly, at a fraction of its
// cost for the messages a cell sends thousands of times a second (acquire,
// release, their replies). Lines outside the fast paths' strict subset go
// to encoding/json, which stays the judge of what a line means and of
// what is malformed: any JSON-lines adapter reads and writes as before.
// A library parser would not do: they accept what encoding/json refuses
// (raw control characters in strings, NaN), and they still allocate.

// appendMsg appends m as one line, byte for byte what json.Marshal
// writes (the fields in Msg's order, omitempty kept), then '\n'.
func appendMsg(b []byte, m *Msg) []byte {
	if m.Servers != nil || m.Settings != nil || m.Capability != nil || m.Library != nil || m.Validity != nil {
		cp := *m                       // m itself does not escape to the heap: the cell's messages
		line, err := json.Marshal(&cp) // hello and hello_ok: once a session
		if err != nil {
			line = []byte(`{"type":"error","reason":"unencodable message"}`)
		}
		return append(append(b, line...), '\n')
	}
	b = appendStr(append(b, `{"type":`...), m.Type)
	b = appendInt(b, `,"id":`, m.ID)
	b = appendInt(b, `,"in_reply_to":`, m.InReplyTo)
	b = appendInt(b, `,"protocol":`, int64(m.Protocol))
	b = appendInt(b, `,"ttl_ms":`, m.TTLms)
	b = appendIntp(b, `,"wait_ms":`, m.WaitMs)
	b = appendInt(b, `,"max_in_flight":`, int64(m.MaxFlight))
	if m.Key != "" {
		b = appendStr(append(b, `,"key":`...), m.Key)
	}
	if m.Token != "" {
		b = appendStr(append(b, `,"token":`...), m.Token)
	}
	b = appendInt(b, `,"cancels":`, m.Cancels)
	b = appendIntp(b, `,"validity_ms":`, m.ValidityMs)
	b = appendInt(b, `,"deadline_ms":`, m.DeadlineMs)
	b = appendInt(b, `,"now_ms":`, m.NowMs)
	b = appendInt(b, `,"fence":`, m.Fence)
	b = appendInt(b, `,"attempts":`, int64(m.Attempts))
	b = appendIntp(b, `,"elapsed_ms":`, m.ElapsedMs)
	if m.Definite != nil {
		b = strconv.AppendBool(append(b, `,"definite":`...), *m.Definite)
	}
	if m.Reason != "" {
		b = appendStr(append(b, `,"reason":`...), m.Reason)
	}
	if m.Code != "" {
		b = appendStr(append(b, `,"code":`...), m.Code)
	}
	return append(b, "}\n"...)
}

// appendInt appends an omitempty integer field.
func appendInt(b []byte, field string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, field...), v, 10)
}

func appendIntp(b []byte, field string, v *int64) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(append(b, field...), *v, 10)
}

// appendStr appends s quoted as encoding/json quotes it: plain printable
// ASCII as it is, anything else (escapes, the HTML characters it
// escapes, UTF-8) by encoding/json itself.
func appendStr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// decodeMsg reads one line into m, as json.Unmarshal would.
func decodeMsg(line []byte, m *Msg) error {
	*m = Msg{}
	if decodeFlat(line, m) {
		return nil
	}
	var v Msg // m itself does not escape to the heap (see appendMsg)
	err := json.Unmarshal(line, &v)
	*m = v
	return err
}

// decodeFlat reads a line that is one flat object of Msg's scalar fields
// spelled exactly, with plain integers, booleans and strings without
// escapes: what the requests and replies of a cell are. Anything else
// (nested values, null, floats, escapes, unknown or differently cased
// keys, invalid UTF-8) is not read here (false), and m is left partly set.
func decodeFlat(line []byte, m *Msg) bool {
	d := flat{b: line}
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return d.end()
	}
	for {
		key, ok := d.str()
		if !ok || !d.byte(':') || !d.field(string(key), m) {
			return false
		}
		if d.byte(',') {
			continue
		}
		return d.byte('}') && d.end()
	}
}

// flat is decodeFlat's position in its line.
type flat struct {
	b []byte
	i int
}

func (d *flat) ws() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

// byte takes c after any whitespace.
func (d *flat) byte(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *flat) end() bool { d.ws(); return d.i == len(d.b) }

// str takes a string without escapes or control characters, valid UTF-8.
func (d *flat) str() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// int takes an integer as JSON writes it: no fraction, no exponent.
func (d *flat) int() (int64, bool) {
	d.ws()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - digits
	if n == 0 || (n > 1 && d.b[digits] == '0') {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
	return v, err == nil
}

// smallInt is an int field's value (an int64 that int holds).
func (d *flat) smallInt() (int, bool) {
	v, ok := d.int()
	return int(v), ok && int64(int(v)) == v
}

func (d *flat) bool() (bool, bool) {
	d.ws()
	for _, lit := range [...]string{"true", "false"} {
		if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
			d.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// field reads key's value into m; false for a key it does not read.
func (d *flat) field(key string, m *Msg) bool {
	var ok bool
	switch key {
	case "type":
		m.Type, ok = d.text(internType)
	case "key":
		m.Key, ok = d.text(nil)
	case "token":
		m.Token, ok = d.text(nil)
	case "reason":
		m.Reason, ok = d.text(nil)
	case "code":
		m.Code, ok = d.text(nil)
	case "definite":
		var v bool
		v, ok = d.bool()
		m.Definite = &v
	case "protocol":
		m.Protocol, ok = d.smallInt()
	case "max_in_flight":
		m.MaxFlight, ok = d.smallInt()
	case "attempts":
		m.Attempts, ok = d.smallInt()
	default:
		p, isInt := m.intField(key)
		if !isInt {
			return false
		}
		var v int64
		if v, ok = d.int(); ok {
			*p = v
		}
	}
	return ok
}

// intField is where an int64 field's value goes (a pointer field gets a
// new value, as encoding/json gives it).
func (m *Msg) intField(key string) (*int64, bool) {
	switch key {
	case "id":
		return &m.ID, true
	case "in_reply_to":
		return &m.InReplyTo, true
	case "ttl_ms":
		return &m.TTLms, true
	case "cancels":
		return &m.Cancels, true
	case "deadline_ms":
		return &m.DeadlineMs, true
	case "now_ms":
		return &m.NowMs, true
	case "fence":
		return &m.Fence, true
	case "wait_ms":
		m.WaitMs = new(int64)
		return m.WaitMs, true
	case "validity_ms":
		m.ValidityMs = new(int64)
		return m.ValidityMs, true
	case "elapsed_ms":
		m.ElapsedMs = new(int64)
		return m.ElapsedMs, true
	}
	return nil, false
}

// text takes a string field (intern: its known values without a copy).
func (d *flat) text(intern func([]byte) string) (string, bool) {
	s, ok := d.str()
	switch {
	case !ok:
		return "", false
	case intern != nil:
		return intern(s), true
	}
	return string(s), true
}

// internType is a message type without an allocation when it is known.
func internType(b []byte) string {
	switch string(b) {
	case TypeAcquire:
		return TypeAcquire
	case TypeRelease:
		return TypeRelease
	case TypeExtend:
		return TypeExtend
	case TypeCancel:
		return TypeCancel
	case TypeGranted:
		return TypeGranted
	case TypeReleased:
		return TypeReleased
	case TypeExtended:
		return TypeExtended
	case TypeRefused:
		return TypeRefused
	case TypeFailed:
		return TypeFailed
	case TypeLost:
		return TypeLost
	}
	return string(b)
}
