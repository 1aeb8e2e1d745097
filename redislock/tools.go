package redislock

import (
	"context"
	"fmt"
	"io"

	"lockbench/internal/redisserver"
	"lockbench/redislock/localmasters"
	"lockbench/service"
)

// Install installs redis-server when it is missing and this process may
// (service.Installer): lockbench without arguments runs on it.
func (redisService) Install(w io.Writer) error {
	if _, ok := redisserver.Path(); ok {
		return nil
	}
	if err := localmasters.InstallRedisServer(w); err != nil {
		return service.NotInstalled{Program: "redis-server", Why: err.Error(), Hint: "apt-get install redis-server"}
	}
	return nil
}

// Libraries: the engine's Redis client and redsync's (service.Libraries).
func (redisService) Libraries() []string {
	return []string{"github.com/redis/rueidis", "github.com/go-redsync/redsync/v4"}
}

// StartCheckServers starts n local redis-server masters for lockbench
// adapter check (service.CheckServers).
func (redisService) StartCheckServers(ctx context.Context, n int, log io.Writer) (service.CheckSet, error) {
	set, err := localmasters.Start(ctx, localmasters.Options{N: n, Embedded: "never", Log: log})
	if err != nil {
		return nil, err
	}
	return checkSet{set}, nil
}

// checkSet are adapter check's masters.
type checkSet struct{ *localmasters.Set }

// DropKey deletes key on every master.
func (s checkSet) DropKey(ctx context.Context, key string) error {
	for _, addr := range s.Addrs() {
		if _, err := redisserver.Do(ctx, addr, "DEL", key); err != nil {
			return fmt.Errorf("DEL on %s: %w", addr, err)
		}
	}
	return nil
}
