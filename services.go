package main

// The lock services besides Redis: each registers itself (package
// service); a new one is its package and one line here.
import (
	_ "lockbench/etcdlock"
	_ "lockbench/pglock"
	_ "lockbench/zklock"
)
