// Package adaptertest is a fake lock-client adapter for tests: a tiny
// in-memory lock behind the adapter protocol, broken as asked, run by a
// test binary that re-executes itself (Env names the mode).
package adaptertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"lockbench/adapter"
)

// Env names the broken behaviour a fake adapter (a test binary run
// again) shows: honest, two-holders, wrong-id, hangs, no-hello, prints,
// crash (at its third request), lost-unknown, mem (no fault: an
// in-memory lock served by adapter.Serve, for benchmarks); or, after N requests
// answered honestly, crash-after:N, hang-after:N, garbage-after:N,
// unknown-id-after:N.
const Env = "LOCKBENCH_FAKE_ADAPTER"

// Serve is the fake adapter on stdin and stdout, broken as mode says; a
// test binary runs it in place of its tests when Env is set, then exits.
func Serve(mode string) {
	if mode == "mem" {
		ServeMem()
		return
	}
	mode, after := splitAfter(mode)
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
		if n <= after {
			write(fakeAnswer("honest", m, held, n))
			continue
		}
		switch {
		case mode == "no-hello", mode == "hangs" && m.Type != adapter.TypeHello, mode == "hang-after":
			continue
		case mode == "garbage-after":
			fmt.Fprintln(out, "Traceback (most recent call last): a library printing on stdout")
			out.Flush()
			continue
		case mode == "unknown-id-after":
			write(adapter.Msg{Type: adapter.TypeRefused, InReplyTo: 999999})
			continue
		case mode == "crash" && n == 3, mode == "crash-after":
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

// splitAfter splits "mode-after:N" into its mode and N (0: from the
// start).
func splitAfter(mode string) (string, int) {
	m, n, ok := strings.Cut(mode, ":")
	if !ok {
		return mode, 0
	}
	after, _ := strconv.Atoi(n)
	return m, after
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
