package adapter_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"

	"lockbench/adapter"
)

// fakeEnv names the broken behaviour a fake adapter (this test binary,
// run again) shows: honest, two-holders, wrong-id, hangs, no-hello,
// prints, crash, lost-unknown.
const fakeEnv = "LOCKBENCH_FAKE_ADAPTER"

// fakeAdapter is a tiny adapter of an in-memory lock, broken as mode
// says; it runs in place of the tests when the test binary is its command.
func fakeAdapter(mode string) {
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	write := func(m adapter.Msg) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(m)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	held := map[string]string{} // key → token
	n := 0
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m adapter.Msg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			os.Exit(2)
		}
		n++
		switch {
		case mode == "no-hello", mode == "hangs" && m.Type != adapter.TypeHello:
			continue
		case mode == "crash" && n == 3:
			fmt.Fprintln(os.Stderr, "fake adapter: about to crash")
			fmt.Fprintln(os.Stderr, "panic: boom")
			os.Exit(3)
		}
		r := fakeAnswer(mode, m, held, n)
		if r.Type == "" {
			continue
		}
		if mode == "prints" && m.Type == adapter.TypeAcquire {
			fmt.Fprintln(out, "INFO acquiring", m.Key)
		}
		if mode == "lost-unknown" && m.Type == adapter.TypeAcquire {
			write(adapter.Msg{Type: adapter.TypeLost, Key: m.Key, Token: "never-granted"})
		}
		write(r)
	}
}

// fakeAnswer is the answer to m.
func fakeAnswer(mode string, m adapter.Msg, held map[string]string, n int) adapter.Msg {
	r := adapter.Msg{InReplyTo: m.ID}
	switch m.Type {
	case adapter.TypeHello:
		r.Type, r.Protocol = adapter.TypeHelloOK, adapter.ProtocolVersion
		r.Library = &adapter.Library{Name: "fake-" + mode, Version: "0.0.1", Language: "go"}
		r.Capability = &adapter.Capabilities{}
		r.Validity = &adapter.ValidityMethod{Method: "ttl"}
		return r
	case adapter.TypeCancel:
		return adapter.Msg{}
	case adapter.TypeAcquire:
		if _, taken := held[m.Key]; taken && mode != "two-holders" {
			r.Type, r.Reason = adapter.TypeRefused, "held by another"
			break
		}
		tok := "t" + strconv.Itoa(n)
		held[m.Key] = tok
		v := int64(500)
		r.Type, r.Token, r.ValidityMs = adapter.TypeGranted, tok, &v
		if mode == "wrong-id" {
			r.InReplyTo = m.ID + 1000
		}
	case adapter.TypeRelease:
		if held[m.Key] != m.Token {
			r.Type, r.Reason = adapter.TypeRefused, "not held"
			break
		}
		delete(held, m.Key)
		r.Type = adapter.TypeReleased
	default:
		r.Type, r.Code = adapter.TypeError, "not_supported"
	}
	return r
}
