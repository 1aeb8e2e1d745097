package plan

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"lockbench/configs"
)

// FuzzParse: any bytes, read as a scenario file of its own kind and as a
// fault scenario (as lockbench chaos reads every file), either give a
// scenario whose every cell is valid, or one "config:" error; never a
// panic.
func FuzzParse(f *testing.F) {
	for _, name := range append(configs.Names(), configs.FaultNames()...) {
		b, _ := configs.Get(name)
		f.Add(b)
	}
	f.Add([]byte("settings:\n  workers: [1]\n"))
	f.Add([]byte("matrix:\n  rate: [1e309]\n"))
	f.Add([]byte("settings: {ttl: 1ms, timeout: 1ms}\n"))
	f.Add([]byte("cells:\n  - name: a\n    faults: [{at: 0s, kind: crash, master_index: [9]}]\n"))
	f.Add([]byte("expect: {violations: 0}\nmatrix:\n  clients: [1, 3]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		for _, faulty := range []bool{false, true} {
			checkParsed(t, b, faulty)
		}
	})
}

// checkParsed: b parses to valid cells, or to one "config:" error.
func checkParsed(t *testing.T, b []byte, faulty bool) {
	t.Helper()
	sc, err := Parse("fuzz.yaml", b, faulty)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "config:") {
			t.Fatalf("faulty %v: error without the config prefix: %v", faulty, err)
		}
		return
	}
	if faulty && !sc.Faulty {
		t.Fatal("read as a fault scenario, yet not one")
	}
	if sc.CellCount() > MaxCells {
		if sc.CheckSize(false) == nil {
			t.Fatalf("%d cells not refused", sc.CellCount())
		}
		return
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatalf("faulty %v: parsed, then failed to expand: %v", faulty, err)
	}
	for _, c := range cells {
		if err := c.Validate(); err != nil {
			t.Fatalf("faulty %v: parsed, but cell %s is invalid: %v", faulty, c.Label, err)
		}
		if c.Faulty != sc.Faulty {
			t.Fatalf("cell %s: faulty %v in a scenario of faulty %v", c.Label, c.Faulty, sc.Faulty)
		}
	}
}

// FuzzParseSecret: a master URL with a password, placed where a scenario
// file may hold one (settings, matrix, a list or a bare value), never shows
// any part of its password in the error. The password is framed by markers
// the rest of the file does not hold, so a leak of either end is seen.
func FuzzParseSecret(f *testing.F) {
	f.Add(uint8(0), "redis://", "bench", "s3cretpw", "127.0.0.1:7000/%zz")
	f.Add(uint8(1), "", "u", "s3cretpw", "127.0.0.1:7000")
	f.Add(uint8(2), "redis://", "bench", "pw", "h:99999")
	f.Add(uint8(3), "rediss://", "", "p/w", "h")
	f.Add(uint8(4), "redis://", "u", "s3cretpw", "h:1")
	forms := []string{
		"settings:\n  masters: [%s]\n",
		"settings:\n  masters: %s\n",
		"matrix:\n  masters: [%s]\n",
		"settings:\n  masters: [\"%s\"]\n",
		"settings:\n  net_latency: 1ms\n  masters: [%s]\n",
	}
	const head, tail = "Qz7", "7zQ"
	f.Fuzz(func(t *testing.T, form uint8, scheme, user, pw, rest string) {
		// Keep the URL one YAML scalar: no flow indicators, quotes, comments
		// or blanks that would split it into other values.
		const yamlSpecial = ",[]{}#&*!|>'\"%@`\\ \t\r\n"
		if strings.ContainsAny(user, ":"+yamlSpecial) || strings.ContainsAny(pw, yamlSpecial) ||
			strings.ContainsAny(scheme+rest, yamlSpecial) {
			return
		}
		for _, part := range []string{scheme, user, rest} {
			if strings.Contains(part, "Qz") || strings.Contains(part, "zQ") || strings.Contains(part, "7z") || strings.Contains(part, "z7") {
				return
			}
		}
		url := scheme + user + ":" + head + pw + tail + "@" + rest
		doc := strings.Replace(forms[int(form)%len(forms)], "%s", url, 1)
		for _, faulty := range []bool{false, true} {
			if _, err := Parse("fuzz.yaml", []byte(doc), faulty); err != nil {
				if msg := err.Error(); strings.Contains(msg, head) || strings.Contains(msg, tail) {
					t.Fatalf("faulty %v: error shows (part of) the password in %q: %v", faulty, doc, err)
				}
			}
		}
	})
}

// TestMastersFlagHidesPassword: pflag quotes a value its Set rejects, so
// --masters must never reject; the address check (redacted) does.
func TestMastersFlagHidesPassword(t *testing.T) {
	for _, v := range []string{`redis://u:s3cr"etpw@h:1`, "bench:s3cretpw@127.0.0.1:7000", "redis://bench:s3cretpw@127.0.0.1:7000/%zz"} {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		s := Defaults()
		BindFlags(fs, &s)
		err := fs.Parse([]string{"--masters", v})
		if err == nil {
			_, err = s.Validate()
		}
		if err == nil || strings.Contains(err.Error(), "s3cr") || strings.Contains(err.Error(), "etpw") {
			t.Fatalf("--masters %s: %v", v, err)
		}
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	s := Defaults()
	BindFlags(fs, &s)
	if err := fs.Parse([]string{"--masters", "a:1,b:2", "--masters", "c:3"}); err != nil || strings.Join(s.Masters, " ") != "a:1 b:2 c:3" {
		t.Fatalf("masters %q, %v", s.Masters, err)
	}
}

// TestMastersFlagOverridesFile: ApplyChanged carries --masters (with a
// password) to a scenario's settings unchanged, not in its redacted form.
func TestMastersFlagOverridesFile(t *testing.T) {
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	var flags Settings
	BindFlags(fs, &flags)
	if err := fs.Parse([]string{"--masters", "redis://u:pw@a:1,b:2"}); err != nil {
		t.Fatal(err)
	}
	dst := Defaults()
	if err := ApplyChanged(fs, &dst); err != nil || strings.Join(dst.Masters, " ") != "redis://u:pw@a:1 b:2" {
		t.Fatalf("masters %q, %v", dst.Masters, err)
	}
}
