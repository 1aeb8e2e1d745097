package main

// The lock services: each registers itself (package service); a new one
// is its package and one line here (and one for a command of its own).
import (
	_ "lockbench/etcdlock"
	_ "lockbench/pglock"
	_ "lockbench/redislock"            // Redis' four topologies: redlock, single, replicated, cluster
	_ "lockbench/redislock/masterscmd" // and its own command: masters
	_ "lockbench/zklock"
)
