package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// Command is one lockbench command: its line in the usage, what it runs,
// and its flag set built as the command builds it (nil: no flags), so
// that the flags page is generated from the flag definitions.
type Command struct {
	Summary string
	Run     func(args []string) error
	Flags   func() *pflag.FlagSet
}

// Commands are the commands by name.
type Commands map[string]Command

// Version is lockbench's version as main sets it (a registered command's
// metrics say it).
var Version = "dev"

var (
	registeredMu sync.Mutex
	registered   = Commands{}
)

// Register adds a command a package of its own brings (a lock service's:
// Redis' masters); main's commands take it through WithRegistered. A
// second one of the same name is a programming error.
func Register(name string, c Command) {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	if _, dup := registered[name]; dup {
		panic("cli: command " + name + " registered twice")
	}
	registered[name] = c
}

// WithRegistered is cs and every registered command; a registered name cs
// has too is a programming error.
func (cs Commands) WithRegistered() Commands {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	for n, c := range registered {
		if _, dup := cs[n]; dup {
			panic("cli: command " + n + " is main's and registered")
		}
		cs[n] = c
	}
	return cs
}

// Names are the commands' names in order.
func (cs Commands) Names() []string {
	names := make([]string, 0, len(cs))
	for n := range cs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Usage lists the commands, one line each.
func (cs Commands) Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lockbench COMMAND [flags]\n\ncommands:")
	for _, n := range cs.Names() {
		fmt.Fprintf(w, "  %-10s %s\n", n, cs[n].Summary)
	}
	fmt.Fprintln(w, "\n'lockbench COMMAND --help' shows a command's flags.")
}

// WriteFlagsDoc writes every command's flags as markdown, commands in
// order, flags as pflag sorts them.
func (cs Commands) WriteFlagsDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Commands and their flags\n\n<!-- generated from the flag definitions by go test -run TestFlagsDoc -update-docs . ; do not edit -->\n\n")
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, n := range cs.Names() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", n, cs[n].Summary)
	}
	for _, n := range cs.Names() {
		if cs[n].Flags == nil {
			continue
		}
		fmt.Fprintf(&b, "\n## lockbench %s\n\n| flag | default | meaning |\n|---|---|---|\n", n)
		cs[n].Flags().VisitAll(func(f *pflag.Flag) { writeFlagRow(&b, f) })
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFlagRow is one flag's row: its names, default and help.
func writeFlagRow(b *strings.Builder, f *pflag.Flag) {
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + ", " + name
	}
	def := f.DefValue
	if def == "" || def == "[]" {
		def = "—"
	}
	fmt.Fprintf(b, "| `%s` | `%s` | %s |\n", name, strings.ReplaceAll(def, "|", "\\|"), strings.NewReplacer("|", "\\|", "\n", " ").Replace(f.Usage))
}
