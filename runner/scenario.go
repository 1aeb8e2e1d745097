package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"lockbench/plan"
	"lockbench/pool"
	"lockbench/results"
)

// Outcome is what a scenario's run came to.
type Outcome struct {
	Cells []*CellOutcome // the cells measured at least once, in order
	// Err is the error that stopped the run at cell FailedCell (nil: none).
	Err         error
	FailedCell  string
	Interrupted bool
	Dir         string // the results directory ("" : none)
}

// CellOutcome is one cell's repeats so far and their combination.
type CellOutcome struct {
	Cell     plan.Cell
	Runs     []results.Run
	Combined results.Run
	Last     *CellResult // the latest repeat, with its verdict
	// Unmet and NotJudged gather every repeat's.
	Unmet, NotJudged []string
}

// MissingTool is a program this machine lacks for a cell (not bad input).
type MissingTool = pool.MissingTool

// Check says whether this machine can serve every cell, before anything
// starts: a cell it cannot serve is bad input, unless a program is missing
// (MissingTool).
func Check(cells []plan.Cell) error {
	for _, c := range cells {
		if err := pool.CanServe(c); err != nil {
			if len(cells) > 1 {
				return fmt.Errorf("cell %s: %w", c.Label, err)
			}
			return err
		}
	}
	return nil
}

// Unserved are the cells this machine cannot serve (Check).
func Unserved(cells []plan.Cell) []plan.Cell {
	var out []plan.Cell
	for _, c := range cells {
		if pool.CanServe(c) != nil {
			out = append(out, c)
		}
	}
	return out
}

// UnservedIn counts the cells of the shipped scenario name this machine
// cannot serve and can, with the persistence modes of the ones it cannot.
func UnservedIn(name string) (skipped, kept int, modes []string, err error) {
	sc, err := plan.Load(name, false)
	if err != nil {
		return 0, 0, nil, err
	}
	cells, err := sc.Cells()
	for _, c := range Unserved(cells) {
		if !slices.Contains(modes, c.Settings.Persistence) {
			modes = append(modes, c.Settings.Persistence)
		}
		skipped++
	}
	return skipped, len(cells) - skipped, modes, err
}

// Run measures every cell of the scenario sc.Repeat times: each round runs
// every cell once (A, B, C, A, B, C, …) so that slow drift of the machine
// lands on all cells alike. After each measurement it writes the cell's
// result combined over its repeats so far, so an interrupted run keeps
// every repeat it finished. It stops at an interrupt (ctx), or at the
// first cell that fails (Outcome.Err). The servers are stopped before it
// returns.
func Run(ctx context.Context, sc *plan.Scenario, cells []plan.Cell, opt Options) (*Outcome, error) {
	st, err := newScenarioRun(sc, cells, &opt)
	if err != nil {
		return nil, err
	}
	if opt.Command != "" {
		logf(opt.Log, "lockbench %s: %s, %d cells%s, estimated %s, results in %s",
			opt.Command, sc.Name, len(cells), RepeatText(sc.Repeat), Estimate(sc, cells), opt.Dir)
	}
	st.started = time.Now()
	st.rounds(ctx)
	if err := st.pool.Close(); err != nil {
		logf(opt.Log, "lockbench %s: %v", sc.Name, err)
	}
	if opt.Progress != nil {
		opt.Progress.Finish()
	}
	st.out.Interrupted = st.out.Interrupted || ctx.Err() != nil
	if err := st.dir.finish(st.out.Interrupted); err != nil {
		return nil, err
	}
	return st.out, nil
}

// scenarioRun is a scenario on its way through its rounds.
type scenarioRun struct {
	sc    *plan.Scenario
	cells []plan.Cell
	opt   *Options
	runID string
	pool  *pool.Pool
	dir   *resultsDir // nil: no directory
	out   *Outcome
	byPos []*CellOutcome
	// started is when the rounds began, which a budget counts from.
	started time.Time
}

func newScenarioRun(sc *plan.Scenario, cells []plan.Cell, opt *Options) (*scenarioRun, error) {
	st := &scenarioRun{sc: sc, cells: cells, opt: opt, runID: newRunID(), out: &Outcome{Dir: opt.Dir},
		byPos: make([]*CellOutcome, len(cells))}
	if opt.Progress != nil {
		opt.Log = opt.Progress.Log()
	}
	st.pool = &pool.Pool{Log: opt.Log}
	if opt.Dir != "" {
		var err error
		if st.dir, err = createResultsDir(opt.Dir, newManifest(sc, cells, opt)); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// measure runs repeat r of cell c (position i) and records it.
func (st *scenarioRun) measure(ctx context.Context, i int, c plan.Cell, r int) (*CellResult, error) {
	if p := st.opt.Progress; p != nil {
		p.StartCell(c, r)
	}
	env, err := st.env(ctx, c, r)
	if err != nil {
		return nil, err
	}
	defer env.logs.abort()
	res, err := runCell(ctx, env)
	if rerr := st.pool.Release(c); rerr != nil { // said, not fatal: the cell's result stands
		logf(st.opt.Log, "chaos: cell %s: cleanup: %v", c.Name, rerr)
	}
	if res == nil {
		return nil, err
	}
	// A cell that failed mid-run with what it measured (res.Run.Broken)
	// is kept as well, then fails the run.
	if cerr := env.logs.commit(); cerr != nil {
		return nil, cerr
	}
	if p := st.opt.Progress; p != nil {
		p.EndCell(c, r, res)
	}
	if rerr := st.record(i, c, r, res); rerr != nil {
		return nil, rerr
	}
	return res, err
}

// env prepares repeat r of cell c: its servers, keys, seed and logs.
func (st *scenarioRun) env(ctx context.Context, c plan.Cell, r int) (cellEnv, error) {
	m, err := st.pool.Prepare(ctx, c)
	if err != nil {
		return cellEnv{}, err
	}
	runID := st.runID
	if st.repeated() {
		runID = fmt.Sprintf("%s-r%d", st.runID, r) // fresh keys for every repeat
	}
	seed := c.Settings.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	c.Faults = results.DrawMoments(c.Faults, seed, r) // recorded: the cell's fault texts name the moment drawn
	env := cellEnv{cell: c, servers: m, prefix: keyPrefix(c.Settings, runID, c.Index), seed: seed, opt: st.opt}
	if p := st.opt.Progress; p != nil {
		env.onInterval = p.Interval
	}
	if st.dir != nil {
		env.dir, env.stem = st.dir.path, st.stem(c, r)
		env.logs, err = openCellLogs(env.dir, env.stem, results.LogMetrics(c.Settings.Load == "open"))
	}
	return env, err
}

// repeated says a cell may run more than once.
func (st *scenarioRun) repeated() bool { return st.lastRound() > 1 }

// stem is where repeat r of c's files go: cells/ID, or cells/repeats/ID.rN
// when the cell has several repeats.
func (st *scenarioRun) stem(c plan.Cell, r int) string {
	if st.repeated() {
		return filepath.Join("repeats", fmt.Sprintf("%s.r%d", c.ID, r))
	}
	return c.ID
}

// record keeps repeat r of cell c, combines its repeats so far and writes
// the cell's files and the manifest.
func (st *scenarioRun) record(i int, c plan.Cell, r int, res *CellResult) error {
	co := st.byPos[i]
	if co == nil {
		co = &CellOutcome{Cell: c}
	}
	co.Runs, co.Last = append(co.Runs, res.Run), res
	if !res.Run.Interrupted { // an interrupted cell showed nothing either way
		co.Unmet, co.NotJudged = append(co.Unmet, res.Failed...), append(co.NotJudged, res.NotJudged...)
	}
	co.Combined = results.CombineRepeats(co.Runs)
	if co.Combined.Repeats != nil {
		co.Combined.Repeats.FreshMasters = plan.RepeatsNeedFreshMasters(c.Settings)
	}
	if st.dir != nil {
		if err := st.dir.writeCell(c, r, co); err != nil {
			return err
		}
	}
	if st.byPos[i] == nil { // listed once its first repeat is written
		st.byPos[i] = co
		st.out.Cells = append(st.out.Cells, co)
	}
	return nil
}

// shown is the cell as its summary shows it: its one measurement, or its
// repeats combined, with every repeat's unmet expectations and reasons.
func (co *CellOutcome) shown() *CellResult {
	if len(co.Runs) < 2 {
		return co.Last
	}
	return &CellResult{Run: co.Combined, Failed: co.Unmet, NotJudged: co.NotJudged, Verdict: co.Combined.Safety.Verdict}
}

// Progress shows a scenario's cells as they run.
type Progress interface {
	StartCell(c plan.Cell, repeat int)
	Interval(results.Interval)
	EndCell(c plan.Cell, repeat int, res *CellResult)
	Finish()
	// Log is where start-up lines go without breaking the display.
	Log() io.Writer
}

// Interruptible is a context that the first SIGINT/SIGTERM cancels, so the
// run winds down and keeps what it measured; a second one exits at once
// (the default signal handling is restored).
func Interruptible() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			interruptedBy.Store(sig)
		case <-ctx.Done():
		}
		signal.Stop(sigs) // a second signal exits at once
		cancel()
	}()
	return ctx, cancel
}

var interruptedBy atomic.Value // os.Signal

// InterruptedBy is the signal that interrupted the run (nil: none), so
// that the exit says which (130 for SIGINT, 143 for SIGTERM).
func InterruptedBy() os.Signal {
	sig, _ := interruptedBy.Load().(os.Signal)
	return sig
}
