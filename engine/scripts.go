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

// extendScript moves the expiry only while the key still holds our token.
const extendScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("pexpire",KEYS[1],ARGV[2]) else return 0 end`

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

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

func (t *tokenSource) next() string {
	return t.prefix + strconv.FormatUint(t.n.Add(1), 36)
}
