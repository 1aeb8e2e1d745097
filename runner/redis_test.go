package runner

// Redis' three topologies are a registered service like the others; the
// runner names none, so its tests register Redis' as main does.
import _ "lockbench/redislock"
