package redisplan

import "lockbench/plan"

// flagUsage is the help of the flags whose settings are Redis' (or whose
// words name Redis' part of a shared one), which plan binds in generic
// words.
var flagUsage = map[string]string{
	"masters":        "masters as host:port, redis://[user:pass@]host:port or rediss://… (comma-separated); default: start --local masters",
	"local":          "start this many local servers on 127.0.0.1: redis-server masters (when --masters is not given; default 5), or a lock service's members (its own default)",
	"embedded":       "embedded in-process masters when redis-server is missing: auto, never, always",
	"tls-ca":         "rediss:// masters and a lock service's https:// servers: CA bundle (PEM) to verify the servers",
	"tls-cert":       "rediss:// masters and a lock service's https:// servers: client certificate (PEM), with --tls-key",
	"tls-key":        "rediss:// masters and a lock service's https:// servers: client key (PEM)",
	"tls-insecure":   "rediss:// masters and a lock service's https:// servers: skip server certificate verification (test setups only)",
	"driver":         "lock client: lockbench (this engine) or redsync (go-redsync/redsync v4 on go-redis v9)",
	"wait-time":      "keep a caller trying this long (Redisson's waitTime) instead of --retries more attempts; 0: retries decide",
	"lease-time":     "Redisson's name of --ttl",
	"flush-delay":    "rueidis MaxFlushDelay per master (0..1ms): less CPU, a little more latency",
	"watchdog":       "Redis: renew every held lock in the background every TTL/3 while its holder lives, as Redisson's watchdog (a failed renewal tells the holder)",
	"sentinel-addrs": "replicated, an external set: its Sentinels as host:port or redis://… (comma-separated), with --master-set; nothing is started",
	"servers":        "any lock service's external servers, as it takes them (comma-separated; Redis': its masters, as --masters takes them); nothing is started",
}

func init() {
	for name, usage := range flagUsage {
		plan.RegisterFlagUsage(name, usage)
	}
}
