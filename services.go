package main

// The lock services: each registers itself (package service); a new one
// is its package and one line here.
import (
	_ "lockbench/etcdlock"
	_ "lockbench/pglock"
	_ "lockbench/redislock" // Redis' three topologies: redlock, single, replicated
	_ "lockbench/zklock"
)
