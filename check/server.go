package check

import (
	"context"
	"errors"
	"fmt"

	"lockbench/internal/redisserver"
)

// ServerMissing says why a fault cell of topology cannot keep its
// protected resource here: redis-server is not on PATH (nil: it is).
func ServerMissing(topology string) error {
	if _, found := redisserver.Path(); found {
		return nil
	}
	return fmt.Errorf("redis-server not found in PATH; a %s fault cell keeps its protected resource on a redis-server (apt-get install redis-server)", topology)
}

// StartServer starts the protected resource's redis-server in dir,
// keeping nothing across a restart; nothing is left running on error.
func StartServer(ctx context.Context, dir string) (*redisserver.Server, error) {
	bin, ok := redisserver.Path()
	if !ok {
		return nil, errors.New("redis-server not found in PATH; install it (apt-get install redis-server)")
	}
	srv := redisserver.New(redisserver.Config{Bin: bin, Dir: dir, Tail: redisserver.NoPersistence()})
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	return srv, nil
}
