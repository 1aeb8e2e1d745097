package plan_test

// plan's tests check the services' settings as a program has them: each
// registered by its package (Redis' topologies by redisplan, the default's
// among them).
import (
	_ "lockbench/etcdlock"
	_ "lockbench/pglock"
	_ "lockbench/redislock/redisplan"
	_ "lockbench/zklock"
)
