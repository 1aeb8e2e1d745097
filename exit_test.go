package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/pflag"

	"lockbench/results"
)

// TestExitCode: every kind of command error lands on its documented code,
// also when wrapped (a command running another, fmt.Errorf %w).
func TestExitCode(t *testing.T) {
	plain := errors.New("boom")
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"help", pflag.ErrHelp, exitOK},
		{"plain", plain, exitFailure},
		{"usage", usagef("x: %d is not accepted", 0), exitUsage},
		{"input error", &results.InputError{Field: "f", Value: "v"}, exitUsage},
		{"wrapped input error", fmt.Errorf("cell a: %w", &results.InputError{Field: "f"}), exitUsage},
		{"threshold", quietExit(exitThreshold), exitThreshold},
		{"interrupted", quietExit(exitInterrupted), exitInterrupted},
		{"quiet ok", quietExit(exitOK), exitOK},
		{"another command's", inCommand("sweep", usageErr(plain)), exitUsage},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}
