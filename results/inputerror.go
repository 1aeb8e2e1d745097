package results

import "fmt"

// InputError is bad input: which field, the bad value, why and what is
// accepted. Commands map it to exit code 2.
type InputError struct {
	Field    string
	Value    string
	Problem  string
	Accepted string
}

func (e *InputError) Error() string {
	s := fmt.Sprintf("%s: %q", e.Field, e.Value)
	if e.Problem != "" {
		s += ": " + e.Problem
	}
	if e.Accepted != "" {
		s += "; accepted: " + e.Accepted
	}
	return s
}
