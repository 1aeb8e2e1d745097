package results

import (
	"math"
	"strconv"
	"strings"
)

// Number formats shared by the limit evidence and report's tables.

// FormatMicros writes a latency in µs with a unit that keeps it short:
// 845 µs, 1.81 ms, 12.3 ms, 1.20 s.
func FormatMicros(us float64) string {
	switch {
	case us >= 1e6:
		return trimZeros(Sig3(us/1e6)) + " s"
	case us >= 1e3:
		return trimZeros(Sig3(us/1e3)) + " ms"
	}
	return trimZeros(Sig3(us)) + " µs"
}

// trimZeros drops a fraction of zeros: 10.0 → 10, 1.50 → 1.5.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// Sig3 rounds to about three significant digits without exponents.
func Sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100 || a == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Pct0 writes a CPU share as a whole percentage: finer is noise.
func Pct0(r float64) string { return strconv.FormatFloat(math.Round(r*100), 'f', 0, 64) + "%" }

// Pct writes a ratio as a percentage with at most two decimals.
func Pct(r float64) string {
	return strconv.FormatFloat(math.Round(r*10000)/100, 'f', -1, 64) + "%"
}

// Rate writes a per-second figure as a whole number with thousands
// separators.
func Rate(v float64) string { return Count(int64(math.Round(v))) }

// Count writes n with thousands separators.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
