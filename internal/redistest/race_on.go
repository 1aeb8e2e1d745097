//go:build race

package redistest

// Race says the tests run under the race detector, which slows the client
// several times: throughput targets are judged without it.
const Race = true
