package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lockbench/internal/redistest"
)

// freshMachine runs the quickstart (shortened) with a PATH that holds only
// dir, as on a machine without redis-server; env adds variables.
func freshMachine(t *testing.T, dir string, env ...string) (stderr string, cells int, code int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r")
	cmd := exec.Command(binary, "quickstart", "--duration", "300ms", "--warmup", "0s", "--out", out, "--no-report")
	cmd.Env = append(os.Environ(), append([]string{"PATH=" + dir}, env...)...)
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err == nil {
		var man struct{ Cells []json.RawMessage }
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		cells = len(man.Cells)
	}
	return e.String(), cells, code
}

// TestQuickstartOnFreshMachine: without redis-server the quickstart does
// not stop with exit 2. Where it may install (root, apt-get: a stand-in
// here that links the real binary), it installs and runs all 6 cells;
// where it may not, it runs the 2 cells embedded masters serve and says in
// one line which it skipped and how to get them.
func TestQuickstartOnFreshMachine(t *testing.T) {
	t.Run("cannot install", func(t *testing.T) {
		stderr, cells, code := freshMachine(t, t.TempDir(), "LOCKBENCH_NO_INSTALL=1")
		if code != 0 || cells != 2 {
			t.Fatalf("exit %d, %d cells written, want 0 and 2:\n%s", code, cells, stderr)
		}
		var lines []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, "skipping") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], "skipping 4 (persistence aof-everysec, aof-always)") || !strings.Contains(lines[0], "apt-get install redis-server") {
			t.Fatalf("want one line naming the skipped cells and the remedy, got %q", lines)
		}
	})
	t.Run("installs as root", func(t *testing.T) {
		real := redistest.Require(t)
		if os.Geteuid() != 0 {
			t.Skip("not root: the quickstart does not install (the other subtest covers that)")
		}
		dir := t.TempDir()
		fake := "#!/bin/sh\ncase \"$1\" in install) exec /bin/ln -sf " + real + " \"$(/usr/bin/dirname \"$0\")/redis-server\";; esac\n"
		if err := os.WriteFile(filepath.Join(dir, "apt-get"), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		stderr, cells, code := freshMachine(t, dir)
		if code != 0 || cells != 6 || !strings.Contains(stderr, "installing it (apt-get install redis-server)") || strings.Contains(stderr, "skipping") {
			t.Fatalf("exit %d, %d cells written, want 0 and 6 after installing:\n%s", code, cells, stderr)
		}
	})
}

// TestReadmeCommandsAreWhatCIRuns: the README opens with exactly the two
// commands, and .ci/run runs the second one as written.
func TestReadmeCommandsAreWhatCIRuns(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := strings.SplitN(string(readme), "```", 3)
	if len(block) < 3 {
		t.Fatal("README has no opening code block")
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimPrefix(block[1], "sh\n"), "\n") {
		if c, _, _ := strings.Cut(l, "#"); strings.TrimSpace(c) != "" {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	if len(cmds) != 2 || cmds[0] != "go build -o lockbench . && ./lockbench" {
		t.Fatalf("README's first commands: %q", cmds)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\n"+string(ci)+"\n", "\n"+cmds[1]+"\n") {
		t.Fatalf(".ci/run does not run the README's test command %q", cmds[1])
	}
}
