package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Keys names the keyspace of a run: K keys under a prefix, built on demand,
// so ten million keys cost nothing up front.
type Keys struct {
	Prefix string
	Count  uint64
	Offset uint64 // a segment's slice starts here
}

// Name is the Redis key of index i (0 ≤ i < Count).
func (k Keys) Name(i uint64) string {
	return k.Prefix + strconv.FormatUint(i+k.Offset, 10)
}

// keyNames are a run's key names: made once for a keyspace small enough
// to keep (a name per acquire would cost an allocation each), else as
// asked.
type keyNames struct {
	keys  Keys
	names []string
}

// keptNames is the largest keyspace whose names are made up front.
const keptNames = 1 << 16

func newKeyNames(k Keys) keyNames {
	n := keyNames{keys: k}
	if k.Count > 0 && k.Count <= keptNames {
		n.names = make([]string, k.Count)
		for i := range n.names {
			n.names[i] = k.Name(uint64(i))
		}
	}
	return n
}

func (n keyNames) name(i uint64) string {
	if i < uint64(len(n.names)) {
		return n.names[i]
	}
	return n.keys.Name(i)
}

// KeyChooser picks the next key index in [0, K) for a worker. Choosers are
// read-only after construction and shared by all workers.
type KeyChooser interface {
	Next(r *rand.Rand) uint64
}

// Uniform picks every key with the same probability.
type Uniform struct{ N uint64 }

func (u Uniform) Next(r *rand.Rand) uint64 { return r.Uint64N(u.N) }

// Single always picks key 0: every worker fights over one lock.
type Single struct{}

func (Single) Next(*rand.Rand) uint64 { return 0 }

// Hotspot sends a share Ops of the operations to the first share Keys of the
// keyspace ("90% of ops on 10% of keys"), uniformly inside each part.
type Hotspot struct {
	N       uint64
	Hot     uint64  // keys in the hot set, ≥ 1
	OpsHot  float64 // share of operations on the hot set
	coldLen uint64
}

func (h Hotspot) Next(r *rand.Rand) uint64 {
	if h.coldLen == 0 || r.Float64() < h.OpsHot {
		return r.Uint64N(h.Hot)
	}
	return h.Hot + r.Uint64N(h.coldLen)
}

// Zipf picks key i with probability ∝ 1/(i+1)^θ, key 0 the hottest. For
// 0 < θ < 1 (YCSB's 0.99 is the usual choice) it is Gray et al.'s
// generator, as in YCSB: one O(K) sum at construction, O(1) per pick, no
// per-key memory. For θ > 1 it uses the standard library's rejection
// sampler.
type Zipf struct {
	n                       uint64
	theta                   float64
	alpha, zetan, eta, half float64
}

// NewZipf checks θ and precomputes the constants.
func NewZipf(n uint64, theta float64) (*Zipf, error) {
	if !(theta > 0) || theta == 1 || math.IsInf(theta, 0) || theta > 10 {
		return nil, fmt.Errorf("zipf-exponent: %v is not accepted; use 0 < exponent < 10, not 1 (0.99 is YCSB's default)", theta)
	}
	z := &Zipf{n: n, theta: theta}
	if theta < 1 {
		z.zetan = zeta(n, theta)
		zeta2 := zeta(2, theta)
		z.alpha = 1 / (1 - theta)
		z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/z.zetan)
		z.half = 1 + math.Pow(0.5, theta)
	}
	return z, nil
}

func zeta(n uint64, theta float64) float64 {
	var s float64
	for i := uint64(1); i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	return s
}

func (z *Zipf) Next(r *rand.Rand) uint64 {
	if z.n == 1 {
		return 0
	}
	if z.theta > 1 {
		// rand.Zipf is not safe to share; build it on this worker's source.
		return rand.NewZipf(r, z.theta, 1, z.n-1).Uint64()
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.half {
		return 1
	}
	v := uint64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(v, z.n-1)
}

// ChooserConfig names a key distribution and its parameters.
type ChooserConfig struct {
	Distribution string  // uniform, zipf, hotspot, single
	Keys         uint64  // K
	ZipfExponent float64 // zipf θ
	HotspotOps   float64 // hotspot: share of operations on the hot set
	HotspotKeys  float64 // hotspot: share of keys in the hot set
}

// MaxKeys bounds the keyspace; keys are named on demand, so this is about
// what a Redis deployment can hold, not about lockbench's memory.
const MaxKeys = 100_000_000

// NewChooser builds a chooser, or one error naming the bad field.
func NewChooser(c ChooserConfig) (KeyChooser, error) {
	if c.Keys < 1 || c.Keys > MaxKeys {
		return nil, fmt.Errorf("keys: %d is not accepted; use 1..%d", c.Keys, MaxKeys)
	}
	switch c.Distribution {
	case "", "uniform":
		return Uniform{N: c.Keys}, nil
	case "single":
		return Single{}, nil
	case "zipf", "zipfian":
		return NewZipf(c.Keys, c.ZipfExponent)
	case "hotspot":
		if !(c.HotspotOps > 0 && c.HotspotOps <= 1) {
			return nil, fmt.Errorf("hotspot-ops: %v is not accepted; use a share in (0, 1], e.g. 0.9", c.HotspotOps)
		}
		if !(c.HotspotKeys > 0 && c.HotspotKeys <= 1) {
			return nil, fmt.Errorf("hotspot-keys: %v is not accepted; use a share in (0, 1], e.g. 0.1", c.HotspotKeys)
		}
		hot := max(uint64(math.Round(float64(c.Keys)*c.HotspotKeys)), 1)
		return Hotspot{N: c.Keys, Hot: hot, OpsHot: c.HotspotOps, coldLen: c.Keys - hot}, nil
	}
	return nil, fmt.Errorf("distribution: %q is not accepted; use uniform, zipf, hotspot or single", c.Distribution)
}
