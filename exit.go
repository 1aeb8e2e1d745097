package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/pflag"

	"lockbench/engine"
	"lockbench/results"
	"lockbench/runner"
)

// Exit codes shared by every command; exitCode is the one place that maps
// a command's error to them.
const (
	exitOK          = 0
	exitFailure     = 1   // the run could not be done
	exitUsage       = 2   // bad input: nothing was started
	exitThreshold   = 3   // results were written but a rule (threshold or expectation) was not met or not judged, or --fail-on
	exitInterrupted = 130 // SIGINT (SIGTERM: exitTerminated): partial results were kept
	exitTerminated  = 143 // SIGTERM: partial results were kept
)

// exitError ends a command with code. Err is what main prints as
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

// usageErr marks bad input (exit 2).
func usageErr(err error) error { return &exitError{exitUsage, err} }

// usagef is bad input described by a format.
func usagef(format string, a ...any) error { return usageErr(fmt.Errorf(format, a...)) }

// quietExit ends with code after the command printed its own lines; 0 is
// no error.
func quietExit(code int) error {
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}

// exitCode maps a command's error to the process's exit code: typed exit
// errors carry theirs, bad input (results.InputError) is 2, --help is 0,
// anything else 1.
func exitCode(err error) int {
	var ee *exitError
	var ie *results.InputError
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return exitOK
	case runner.InterruptedBy() != nil && (errors.As(err, &ee) && ee.code == exitInterrupted || errors.Is(err, context.Canceled)):
		// a signal ended the command (also inside a set-up step it cut
		// short): 130 for SIGINT, 143 for SIGTERM (128 + 15, as shells say)
		if runner.InterruptedBy() == syscall.SIGTERM {
			return exitTerminated
		}
		return exitInterrupted
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ie):
		return exitUsage
	}
	return exitFailure
}

// commandErr is an error of another command this one ran (sweep's report
// stage, the quickstart's sweep): main names that command, as the user
// would see it had they run it; "" names none.
type commandErr struct {
	name string
	err  error
}

func (e *commandErr) Error() string { return e.err.Error() }
func (e *commandErr) Unwrap() error { return e.err }

// inCommand marks err as the named command's.
func inCommand(name string, err error) error {
	if err == nil {
		return nil
	}
	return &commandErr{name, err}
}

// printErr prints err as "lockbench NAME: ERR" unless it says nothing more
// (--help, or the command already printed why), and returns its exit code.
func printErr(name string, err error) int {
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
	return exitCode(err)
}

// exit ends the process after a command: its error printed, its code.
func exit(name string, err error) { os.Exit(printErr(name, err)) }

// flagErr is a flag-parsing error: --help ends with 0, anything else is
// bad input. pflag quotes a bad value whole; a master address given where
// a count is taken (--local, chaos' --masters N) has its password hidden.
func flagErr(err error) error {
	if errors.Is(err, pflag.ErrHelp) {
		return err
	}
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		err = errors.New(engine.RedactIn(err.Error(), bad.GetValue()))
	}
	return usageErr(err)
}
