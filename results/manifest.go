package results

import "time"

// A results directory, as written by `lockbench sweep` (and chaos):
//
//	DIR/manifest.json                     Manifest
//	DIR/cells/NNN-ID.json                 Run (with Cell set), one per cell
//	DIR/cells/NNN-ID.acquire.hlog         HdrHistogram interval log, 1 s intervals, µs:
//	                                      successful acquires (from the intended start in open loop)
//	DIR/cells/NNN-ID.acquire_uncorrected.hlog  open loop only: from the actual start
//	DIR/cells/NNN-ID.failed.hlog          failed acquires
//	DIR/cells/NNN-ID.release.hlog         releases
//
// Interval histograms carry StartTimeMs/EndTimeMs (Unix ms) and no tag (one
// metric per file, so HdrHistogram's own tools read them as they are; files
// of older versions carry Tag=METRIC, which readers here ignore); their
// counts per interval give the per-second rates.

// Manifest describes one results directory.
type Manifest struct {
	Name             string `json:"name"`
	Description      string `json:"description,omitempty"`
	ConfigFile       string `json:"config_file,omitempty"`
	Config           any    `json:"config"`
	LockbenchVersion string `json:"lockbench_version"`
	GoVersion        string `json:"go_version"`
	// ServerVersions are the cells' server versions, each once, in order
	// (CellConfig.ServerVersion; legacy.go reads an older manifest's).
	ServerVersions []string   `json:"server_versions,omitempty"`
	Machine        Machine    `json:"machine"`
	StartedAt      time.Time  `json:"started_at"`
	FinishedAt     time.Time  `json:"finished_at,omitzero"`
	Interrupted    bool       `json:"interrupted"`
	Segment        string     `json:"segment,omitempty"` // "i/n" for multi-machine runs
	Cells          []CellInfo `json:"cells"`
}

// Machine is where the client ran.
type Machine struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Cores       int    `json:"cores"`
	CPUModel    string `json:"cpu_model,omitempty"`
	MemoryBytes int64  `json:"memory_bytes"`

	// LocalCPUs and ClientCPUs: --local-cpus pinned the local masters and
	// lockbench to these CPUs.
	LocalCPUs  []int `json:"local_cpus,omitempty"`
	ClientCPUs []int `json:"lockbench_cpus,omitempty"`
}

// CellInfo names one cell of a sweep and where its files are.
type CellInfo struct {
	Index int               `json:"index"`
	ID    string            `json:"id"`    // file stem: NNN-axis=value,...
	Label string            `json:"label"` // human: "persistence=aof-always mode=sequential"
	Axes  map[string]string `json:"axes"`  // the swept settings of this cell
	File  string            `json:"file"`  // cells/NNN-ID.json, relative to the directory
}

// Event is something that happened during a cell (a fault, a step change),
// in seconds since the cell's measured window opened.
type Event struct {
	AtSeconds float64 `json:"at_s"`
	Kind      string  `json:"kind"`
	Target    string  `json:"target,omitempty"`
	Detail    string  `json:"detail,omitempty"`
}

// Metric names: hlog file suffixes.
const (
	MetricAcquire            = "acquire"
	MetricAcquireUncorrected = "acquire_uncorrected"
	MetricFailed             = "failed"
	MetricRelease            = "release"
	MetricTimeToLock         = "time_to_lock"
	MetricGaveUp             = "gave_up"
	MetricExercisedHolds     = "exercised_holds"
	MetricHandoffGap         = "handoff_gap"
)
