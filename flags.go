package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"lockbench/plan"
)

// commandFlags build each command's flag set as the command does, so that
// docs/flags.md is generated from them and a test holds the two together.
var commandFlags = map[string]func() *pflag.FlagSet{
	"run": func() *pflag.FlagSet { a := runArgs{s: plan.Defaults()}; return runFlags(&a) },
	"sweep": func() *pflag.FlagSet {
		var a scenarioArgs
		o := plan.Defaults()
		return sweepFlags(&a, &o)
	},
	"chaos": func() *pflag.FlagSet {
		var a chaosArgs
		f := plan.FaultDefaults()
		return chaosFlags(&a, &f)
	},
	"report":  func() *pflag.FlagSet { var a reportArgs; return reportFlags(&a) },
	"compare": func() *pflag.FlagSet { var a compareArgs; return compareFlags(&a) },
	"masters": func() *pflag.FlagSet { var a mastersArgs; return mastersFlags(&a) },
	"choose":  func() *pflag.FlagSet { var a chooseArgs; return chooseFlags(&a) },
}

// writeFlagsDoc writes every command's flags as markdown, commands in
// order, flags as pflag sorts them.
func writeFlagsDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Commands and their flags\n\n<!-- generated from the flag definitions by go test -run TestFlagsDoc -update-docs . ; do not edit -->\n\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, n := range names {
		fmt.Fprintf(&b, "| `%s` | %s |\n", n, commands[n].summary)
	}
	for _, n := range names {
		build, ok := commandFlags[n]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "\n## lockbench %s\n\n| flag | default | meaning |\n|---|---|---|\n", n)
		build().VisitAll(func(f *pflag.Flag) {
			name := "--" + f.Name
			if f.Shorthand != "" {
				name = "-" + f.Shorthand + ", " + name
			}
			def := f.DefValue
			if def == "" || def == "[]" {
				def = "—"
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", name, strings.ReplaceAll(def, "|", "\\|"), strings.NewReplacer("|", "\\|", "\n", " ").Replace(f.Usage))
		})
	}
	_, err := io.WriteString(w, b.String())
	return err
}
