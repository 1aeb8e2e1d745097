package adapter

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func i64(v int64) *int64 { return &v }

// codecMsgs are messages of every shape the codec meets, with the
// strings encoding/json escapes.
var codecMsgs = []Msg{
	{Type: TypeAcquire, ID: 7, Key: "lockbench:k:1"},
	{Type: TypeRelease, ID: 8, Key: "k", Token: "tok-ABC_123"},
	{Type: TypeExtend, ID: 9, Key: "k", Token: "t", TTLms: 3000},
	{Type: TypeCancel, ID: 10, Cancels: 7},
	{Type: TypeGranted, InReplyTo: 7, Token: "t", ValidityMs: i64(987), Fence: 3, Attempts: 2, ElapsedMs: i64(0)},
	{Type: TypeGranted, InReplyTo: 7, Token: "t", DeadlineMs: 1767000000000, NowMs: 1766999999000},
	{Type: TypeRefused, InReplyTo: 1 << 60, Reason: "held by another", Attempts: 1, ElapsedMs: i64(-1)},
	{Type: TypeFailed, InReplyTo: 3, Definite: boolp(false), Reason: `quote " backslash \ <html> & é`, Code: "timeout"},
	{Type: TypeLost, Key: "tab\there\nnewline", Token: "\u2028 \x01", Reason: "renewal failed"},
	{Type: TypeError, InReplyTo: 4, Code: "not_supported", Reason: "invalid \xff utf-8"},
	{Type: TypeHello, ID: 1, Protocol: 1, Servers: []string{"127.0.0.1:1"}, TTLms: 1000, WaitMs: i64(0), MaxFlight: 16, Settings: json.RawMessage(`{"a":1}`)},
	{Type: TypeHelloOK, InReplyTo: 1, Protocol: 1, Library: &Library{Name: "x", Version: "1"}, Capability: &Capabilities{Extend: true}, Validity: &ValidityMethod{Method: "ttl"}},
	{},
}

// The encoder writes what encoding/json writes, byte for byte.
func TestAppendMsgIsEncodingJSON(t *testing.T) {
	for _, m := range codecMsgs {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendMsg(nil, &m); !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("appendMsg(%+v):\n got %s\nwant %s", m, got, want)
		}
	}
}

// The decoder reads what encoding/json reads; the cell's shapes, in
// Go's spelling and in Python's (", " and ": "), take the fast path.
func TestDecodeMsgIsEncodingJSON(t *testing.T) {
	fast := 0
	for _, m := range codecMsgs {
		line, _ := json.Marshal(m)
		spaced := bytes.ReplaceAll(bytes.ReplaceAll(line, []byte(`,"`), []byte(`, "`)), []byte(`":`), []byte(`": `))
		for _, l := range [][]byte{line, spaced} {
			sameAsEncodingJSON(t, l)
			var probe Msg
			if decodeFlat(l, &probe) {
				fast++
			}
		}
	}
	// acquire, release, extend, cancel, 2 granted, refused: each spelled two ways.
	if fast < 14 {
		t.Errorf("%d lines took the fast path, want at least 14 (the cell's shapes)", fast)
	}
	for _, l := range []string{
		``, `{}`, ` { "type" : "granted" , "in_reply_to" : 5 } `, `{"type":"granted"}x`, `{"type":"granted",}`,
		`{"type":"granted","in_reply_to":1.0}`, `{"type":"granted","in_reply_to":1e3}`, `{"type":"granted","in_reply_to":01}`,
		`{"type":"granted","in_reply_to":-0}`, `{"type":"granted","in_reply_to":99999999999999999999}`,
		`{"Type":"granted"}`, `{"type":"gr\u0061nted"}`, `{"type":null}`, `{"type":"granted","validity_ms":null}`,
		`{"type":"granted","definite":tru}`, `{"type":"granted","definite":true}`, `{"type":"granted","attempts":"2"}`,
		`{"type":"granted","extra":[1,{"a":2}]}`, `{"type":"granted","type":"refused"}`, "{\"type\":\"a\x01b\"}",
		`{"type":"granted","protocol":9223372036854775807}`, `[1]`, `"granted"`, `{"type":"granted"`, `{"type":"g`,
	} {
		sameAsEncodingJSON(t, []byte(l))
	}
}

func sameAsEncodingJSON(t *testing.T, line []byte) {
	t.Helper()
	var want, got Msg
	wantErr := json.Unmarshal(line, &want)
	gotErr := decodeMsg(line, &got)
	if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(got, want) {
		t.Errorf("decodeMsg(%q) = %+v, %v; encoding/json: %+v, %v", line, got, gotErr, want, wantErr)
	}
}

// FuzzDecodeMsg: whatever the line, the decoder agrees with encoding/json.
func FuzzDecodeMsg(f *testing.F) {
	for _, m := range codecMsgs {
		line, _ := json.Marshal(m)
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) { sameAsEncodingJSON(t, line) })
}

// BenchmarkCodec is one cycle's lines, encoded and decoded: acquire,
// granted, release, released.
func BenchmarkCodec(b *testing.B) {
	msgs := []Msg{
		{Type: TypeAcquire, ID: 123456, Key: "lockbench:key:4711"},
		{Type: TypeGranted, InReplyTo: 123456, Token: "c2V0LWJ5LWxvY2tiZW5jaA", ValidityMs: i64(9871), Attempts: 1, ElapsedMs: i64(1)},
		{Type: TypeRelease, ID: 123457, Key: "lockbench:key:4711", Token: "c2V0LWJ5LWxvY2tiZW5jaA"},
		{Type: TypeReleased, InReplyTo: 123457, ElapsedMs: i64(0)},
	}
	b.Run("lockbench", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		var m Msg
		for b.Loop() {
			for i := range msgs {
				buf = appendMsg(buf[:0], &msgs[i])
				if err := decodeMsg(buf[:len(buf)-1], &m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var m Msg
		for b.Loop() {
			for i := range msgs {
				buf, _ := json.Marshal(&msgs[i])
				if err := json.Unmarshal(buf, &m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
