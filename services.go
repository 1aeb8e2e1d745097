package main

// The lock services besides Redis (whose three topologies package bench
// registers): each registers itself (package service); a new one is its
// package and one line here.
import (
	_ "lockbench/etcdlock"
	_ "lockbench/pglock"
	_ "lockbench/zklock"
)
