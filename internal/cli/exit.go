// Package cli is what every lockbench command shares at its edges: the
// exit codes, errors that carry one, and the flags page generated from the
// commands' flag sets. The commands themselves are package main's.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/pflag"

	"lockbench/internal/redact"
	"lockbench/results"
	"lockbench/runner"
)

// Exit codes shared by every command; Code is the one place that maps a
// command's error to them.
const (
	OK          = 0
	Failure     = 1   // the run could not be done
	Usage       = 2   // bad input: nothing was started
	Threshold   = 3   // results were written but a rule (threshold or expectation) was not met or not judged, or --fail-on
	Interrupted = 130 // SIGINT (SIGTERM: Terminated): partial results were kept
	Terminated  = 143 // SIGTERM: partial results were kept
)

// exitError ends a command with code. err is what Print prints as
// "lockbench COMMAND: ERR"; nil when the command already said why.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// UsageErr marks bad input (exit 2).
func UsageErr(err error) error { return &exitError{Usage, err} }

// Usagef is bad input described by a format.
func Usagef(format string, a ...any) error { return UsageErr(fmt.Errorf(format, a...)) }

// NotAccepted is bad input in one field.
func NotAccepted(field, value, accepted string) error {
	return Usagef("%s: %q is not accepted; use %s", field, value, accepted)
}

// Quiet ends with code after the command printed its own lines; OK is no
// error.
func Quiet(code int) error {
	if code == OK {
		return nil
	}
	return &exitError{code: code}
}

// Code maps a command's error to the process's exit code: typed exit
// errors carry theirs, bad input (results.InputError) is 2, --help is 0,
// anything else 1.
func Code(err error) int {
	var ee *exitError
	var ie *results.InputError
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return OK
	case runner.InterruptedBy() != nil && (errors.As(err, &ee) && ee.code == Interrupted || errors.Is(err, context.Canceled)):
		// a signal ended the command (also inside a set-up step it cut
		// short): 130 for SIGINT, 143 for SIGTERM (128 + 15, as shells say)
		if runner.InterruptedBy() == syscall.SIGTERM {
			return Terminated
		}
		return Interrupted
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ie):
		return Usage
	}
	return Failure
}

// commandErr is an error of another command this one ran (sweep's report
// stage, the quickstart's sweep): Print names that command, as the user
// would see it had they run it; "" names none.
type commandErr struct {
	name string
	err  error
}

func (e *commandErr) Error() string { return e.err.Error() }
func (e *commandErr) Unwrap() error { return e.err }

// InCommand marks err as the named command's.
func InCommand(name string, err error) error {
	if err == nil {
		return nil
	}
	return &commandErr{name, err}
}

// Print prints err as "lockbench NAME: ERR" unless it says nothing more
// (--help, or the command already printed why), and returns its exit code.
func Print(name string, err error) int {
	var ee *exitError
	var ce *commandErr
	if errors.As(err, &ce) {
		name = ce.name
	}
	quiet := errors.Is(err, pflag.ErrHelp) || (errors.As(err, &ee) && ee.err == nil)
	if err != nil && !quiet {
		prefix := "lockbench"
		if name != "" {
			prefix += " " + name
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", prefix, err)
	}
	return Code(err)
}

// Exit ends the process after a command: its error printed, its code.
func Exit(name string, err error) { os.Exit(Print(name, err)) }

// FlagErr is a flag-parsing error: --help ends with 0, anything else is
// bad input. pflag quotes a bad value whole; a master address given where
// a count is taken (--local, chaos' --masters N) has its password hidden.
func FlagErr(err error) error {
	if errors.Is(err, pflag.ErrHelp) {
		return err
	}
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		err = errors.New(redact.In(err.Error(), bad.GetValue()))
	}
	return UsageErr(err)
}
