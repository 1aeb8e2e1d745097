// Package plan turns flags and YAML scenario files into validated settings
// and expands sweeps into cells.
package plan

import "lockbench/results"

// Duration is a time.Duration written as "10s" in YAML and JSON.
type Duration = results.Duration

// Settings is every setting of one benchmark cell (see results.Settings for
// the fields): the data type is results', where a result records it; plan
// adds the checks, flags and derived configurations.
type Settings results.Settings
