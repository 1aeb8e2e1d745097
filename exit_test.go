package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/pflag"

	"lockbench/internal/cli"
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
		{"nil", nil, cli.OK},
		{"help", pflag.ErrHelp, cli.OK},
		{"plain", plain, cli.Failure},
		{"usage", cli.Usagef("x: %d is not accepted", 0), cli.Usage},
		{"input error", &results.InputError{Field: "f", Value: "v"}, cli.Usage},
		{"wrapped input error", fmt.Errorf("cell a: %w", &results.InputError{Field: "f"}), cli.Usage},
		{"threshold", cli.Quiet(cli.Threshold), cli.Threshold},
		{"interrupted", cli.Quiet(cli.Interrupted), cli.Interrupted},
		{"quiet ok", cli.Quiet(cli.OK), cli.OK},
		{"another command's", cli.InCommand("sweep", cli.UsageErr(plain)), cli.Usage},
	} {
		if got := cli.Code(c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}
