package chaos

import (
	"errors"
	"strconv"

	"github.com/spf13/pflag"

	"lockbench/plan"
)

// chaosUsage is how a shared setting reads in chaos, where plan's words
// (written for run and sweep) would mislead.
var chaosUsage = map[string]string{
	"persistence": "none, aof-no, aof-everysec, aof-always",
	"local":       "local lock masters to start (--masters N, its old name, is still accepted)",
	"workers":     "workers per client",
	"keys":        "lock keys (one protected counter each)",
	"hold":        "mean time between reading a counter and writing it back, inside the lock",
	"duration":    "length of each cell",
	"seed":        "random seed (0: from the clock)",
}

// BindFlags registers a chaos cell's settings as flags on fs, bound to s:
// the shared ones through plan (the same parsing), then chaos' own.
func BindFlags(fs *pflag.FlagSet, s *Settings) {
	names := make([]string, len(SharedSettings))
	for i, n := range SharedSettings {
		names[i] = plan.FlagName(n)
	}
	plan.BindSomeFlags(fs, &s.Settings, names...)
	for name, usage := range chaosUsage {
		fs.Lookup(name).Usage = usage
	}
	// --masters N: the old name of --local; hidden, as masters are
	// addresses everywhere else.
	fs.Var(oldMastersFlag{&s.Local}, "masters", "old name of --local")
	_ = fs.MarkHidden("masters")
	fs.IntVar(&s.Clients, "clients", s.Clients, "lock clients, each with its own connections")
	fs.StringVar(&s.ClientMode, "client-mode", s.ClientMode, "goroutines or processes (one lockbench process per client)")
	fs.Int64Var(&s.Acquisitions, "acquisitions", s.Acquisitions, "end a cell after this many acquisitions (0: run for duration)")
	fs.BoolVar(&s.Fencing, "fencing", s.Fencing, "fencing tokens: the resource refuses stale reads and writes")
	fs.BoolVar(&s.CheckValidity, "check-validity", s.CheckValidity, "skip a write when the lock's validity ran out during the hold")
	fs.Int64Var(&s.MinAcquisitions, "min-acquisitions", s.MinAcquisitions, "a cell with fewer acquisitions or acknowledged writes judged nothing and fails (0: no minimum)")
}

// ApplyChanged copies the settings flags set on fs (bound by BindFlags)
// onto dst: flags override a scenario file, cell by cell.
func ApplyChanged(fs *pflag.FlagSet, dst *Settings) error {
	return plan.ApplyChangedWith(fs, func(target *pflag.FlagSet) { BindFlags(target, dst) })
}

// oldMastersFlag is --masters N, the old name of --local N. As masters are
// addresses in run and sweep, an address here is told what chaos takes.
type oldMastersFlag struct{ local *int }

func (f oldMastersFlag) String() string { return strconv.Itoa(*f.local) }
func (f oldMastersFlag) Type() string   { return "int" }
func (f oldMastersFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("chaos starts its own masters (it crashes and restarts them); give how many with --local N (1..15), of which --masters N is the old name")
	}
	*f.local = n
	return nil
}
