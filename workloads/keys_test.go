package workloads

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func draw(t *testing.T, c KeyChooser, n int) map[uint64]int {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[uint64]int{}
	for range n {
		counts[c.Next(r)]++
	}
	return counts
}

func TestZipfSkew(t *testing.T) {
	const k, n = 1000, 400_000
	z, err := NewChooser(ChooserConfig{Distribution: "zipf", Keys: k, ZipfExponent: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	counts := draw(t, z, n)
	// P(key 0) = 1/zeta(K, θ); the top 10 keys hold sum(1/i^θ, i≤10)/zeta.
	zk := zeta(k, 0.99)
	if got, want := float64(counts[0])/n, 1/zk; math.Abs(got-want) > 0.01 {
		t.Fatalf("key 0 share %.4f, want %.4f", got, want)
	}
	top10 := 0
	for i := range uint64(10) {
		top10 += counts[i]
	}
	if got, want := float64(top10)/n, zeta(10, 0.99)/zk; math.Abs(got-want) > 0.02 {
		t.Fatalf("top-10 share %.3f, want %.3f", got, want)
	}
	for key := range counts {
		if key >= k {
			t.Fatalf("key %d outside [0,%d)", key, k)
		}
	}
	if counts[0] <= counts[1] || counts[1] <= counts[10] || counts[10] <= counts[500] {
		t.Fatalf("zipf not decreasing: %d %d %d %d", counts[0], counts[1], counts[10], counts[500])
	}
	// θ > 1 goes through the standard library sampler and is still skewed.
	z2, _ := NewChooser(ChooserConfig{Distribution: "zipf", Keys: k, ZipfExponent: 1.5})
	c2 := draw(t, z2, 100_000)
	if float64(c2[0])/100_000 < 0.3 {
		t.Fatalf("zipf 1.5: key 0 share %.3f, want > 0.3", float64(c2[0])/100_000)
	}
}

func TestHotspotSkew(t *testing.T) {
	const k, n = 10_000, 200_000
	h, err := NewChooser(ChooserConfig{Distribution: "hotspot", Keys: k, HotspotOps: 0.9, HotspotKeys: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	counts := draw(t, h, n)
	hot := 0
	for key, c := range counts {
		if key < k/10 {
			hot += c
		}
		if key >= k {
			t.Fatalf("key %d out of range", key)
		}
	}
	if share := float64(hot) / n; math.Abs(share-0.9) > 0.01 {
		t.Fatalf("hot set got %.3f of ops, want 0.90", share)
	}
	if len(counts) < k*9/10 {
		t.Fatalf("only %d distinct keys drawn; the cold set is not reached", len(counts))
	}
}

func TestUniformAndSingle(t *testing.T) {
	u, _ := NewChooser(ChooserConfig{Keys: 10})
	counts := draw(t, u, 100_000)
	for i := range uint64(10) {
		if c := counts[i]; c < 9000 || c > 11000 {
			t.Fatalf("uniform key %d drawn %d times of 100000", i, c)
		}
	}
	s, _ := NewChooser(ChooserConfig{Distribution: "single", Keys: 1_000_000})
	if c := draw(t, s, 1000); len(c) != 1 || c[0] != 1000 {
		t.Fatalf("single hot key: %v", c)
	}
	// Ten million keys: no per-key memory, picks stay in range.
	big, err := NewChooser(ChooserConfig{Distribution: "zipf", Keys: 10_000_000, ZipfExponent: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	for key := range draw(t, big, 10_000) {
		if key >= 10_000_000 {
			t.Fatalf("key %d out of range", key)
		}
	}
}

func TestChooserErrorsNameField(t *testing.T) {
	for field, c := range map[string]ChooserConfig{
		"keys":          {Keys: 0},
		"distribution":  {Keys: 10, Distribution: "gauss"},
		"zipf-exponent": {Keys: 10, Distribution: "zipf", ZipfExponent: 1},
		"hotspot-ops":   {Keys: 10, Distribution: "hotspot", HotspotOps: 0, HotspotKeys: 0.1},
		"hotspot-keys":  {Keys: 10, Distribution: "hotspot", HotspotOps: 0.9, HotspotKeys: 2},
	} {
		if _, err := NewChooser(c); err == nil || err.Error()[:len(field)+1] != field+":" {
			t.Errorf("%s: got %v", field, err)
		}
	}
}

func TestHoldDistributions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dist := range []string{"fixed", "uniform", "exponential"} {
		h, err := NewHoldTime(dist, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		var sum time.Duration
		const n = 20000
		for range n {
			d := h.Next(r)
			if d < 0 {
				t.Fatalf("%s: negative hold", dist)
			}
			sum += d
		}
		if mean := sum / n; mean < 9500*time.Microsecond || mean > 10500*time.Microsecond {
			t.Fatalf("%s: mean hold %v, want about 10ms", dist, mean)
		}
	}
	if _, err := NewHoldTime("pareto", time.Millisecond); err == nil {
		t.Fatal("unknown hold distribution accepted")
	}
}
