package plan_test

// plan's tests check the services' settings as a program has them: each
// registered by its package.
import (
	_ "lockbench/etcdlock"
	_ "lockbench/pglock"
	_ "lockbench/zklock"
)
