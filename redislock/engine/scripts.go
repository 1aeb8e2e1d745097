package engine

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// releaseScript deletes the key only while it still holds our token, so a
// release never frees another holder's lock.
const releaseScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`

// NotifySuffix makes a key's release channel: a notify release publishes
// on key + NotifySuffix. A suffix keeps the channel under the run's key
// prefix, and one fixed suffix maps distinct keys to distinct channels.
const NotifySuffix = ":released"

// NotifyChannel is the channel a notify release of key publishes on.
func NotifyChannel(key string) string { return key + NotifySuffix }

// releaseNotifyScript is releaseScript that also announces the release on
// the key's channel, in the same script so that no waiter sees the key
// free without the message (strategy notify). It publishes only where it
// deleted our token. Only a held lock's release runs it: a failed
// attempt's clean-up announces nothing (see tryAcquire). The message is
// the freed token, which tells the masters' messages of one release apart.
const releaseNotifyScript = `if redis.call("get",KEYS[1]) == ARGV[1] then redis.call("del",KEYS[1]); redis.call("publish",KEYS[1].."` + NotifySuffix + `",ARGV[1]); return 1 else return 0 end`

// extendScript moves the expiry only while the key still holds our token.
const extendScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("pexpire",KEYS[1],ARGV[2]) else return 0 end`

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// cleanupScript deletes each key only when it is a string starting with one
// of the given token prefixes: after a run only our own locks go, even if
// a foreign key happens to share the key prefix.
const cleanupScript = `local n = 0
for _, k in ipairs(KEYS) do
  if redis.call("type", k).ok == "string" then
    local v = redis.call("get", k)
    for _, p in ipairs(ARGV) do
      if string.sub(v, 1, #p) == p then redis.call("del", k); n = n + 1; break end
    end
  end
end
return n`

// tokenSource makes lock tokens unique across processes: a random
// per-process prefix (120 bits) plus a counter, cheaper than 20 random bytes
// per acquire and just as unique.
type tokenSource struct {
	prefix string
	n      atomic.Uint64
}

func newTokenSource() *tokenSource {
	var b [15]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("lockbench: no system randomness: " + err.Error())
	}
	return &tokenSource{prefix: base64.RawURLEncoding.EncodeToString(b[:]) + "."}
}

// NewTokenSource returns a token source for another driver, so its lock
// values carry a prefix the cleanup recognises.
func NewTokenSource() *TokenSource { return (*TokenSource)(newTokenSource()) }

// TokenSource is the exported face of tokenSource.
type TokenSource tokenSource

// Next is a new unique token.
func (t *TokenSource) Next() string { return (*tokenSource)(t).next() }

// Prefix is what every token of this source starts with.
func (t *TokenSource) Prefix() string { return t.prefix }

// next builds the token in one allocation (a concatenation with
// FormatUint would take two).
func (t *tokenSource) next() string {
	var b [48]byte
	return string(strconv.AppendUint(append(b[:0], t.prefix...), t.n.Add(1), 36))
}
