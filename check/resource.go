package check

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// The protected resource lives in its own redis-server, shared by every
// client process: per lock key a history (a list of write ids) that
// holders read, then (after the hold) write back with their id appended.
//
// Keys under the cell's prefix P:
//
//	P res:K      the history protected by lock key K (a list of write ids)
//	P hi:K       fencing: the highest token the resource has seen for K
//	P fence      fencing: the token counter (INCR per acquire)
//	P rej:r      fenced reads refused (stale token)
//	P holds      the hold log (holdFormat), one entry per hold
//
// What the writes did is judged from the final histories and the hold log
// (history.go), not from anything the write scripts count.
type Resource struct {
	c      rueidis.Client
	prefix string
}

// appendBody is a write under the lock, as the history model has it: keep
// the first ARGV[2] entries the writer read (at most as many as there are)
// and append its id ARGV[1]; it sets dropped, the entries it cut (live
// figures only: acknowledged or not, the final read judges them).
const appendBody = `
local n = redis.call('LLEN', KEYS[1])
local l = tonumber(ARGV[2])
local dropped = 0
if n > l then
  dropped = n - l
  if l == 0 then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], 0, l - 1) end
end
redis.call('RPUSH', KEYS[1], ARGV[1])
`

// readBody answers a read: the history's length and last id.
const readBody = `
local n = redis.call('LLEN', KEYS[1])
if n == 0 then return {0, ''} end
return {n, redis.call('LINDEX', KEYS[1], -1)}`

// fenceCheck refuses (with refused) a token older than one the key has
// seen (KEYS[2]), and otherwise records it: a later write with an older
// token is then refused too, so no write can land between a reader's read
// and its write.
func fenceCheck(token, refused string) string {
	return `
local hi = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(` + token + `)
if t < hi then ` + refused + ` end
if t > hi then redis.call('SET', KEYS[2], ` + token + `) end`
}

var (
	readScript        = rueidis.NewLuaScript(readBody)
	fencedReadScript  = rueidis.NewLuaScript(fenceCheck("ARGV[1]", "redis.call('INCR', KEYS[3]) return {-1, ''}") + readBody)
	writeScript       = rueidis.NewLuaScript(appendBody + "return dropped")
	fencedWriteScript = rueidis.NewLuaScript(fenceCheck("ARGV[3]", "return {0, 0}") + appendBody + "return {1, dropped}")
)

func Open(addr, prefix string) (*Resource, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		return nil, fmt.Errorf("resource %s: %w", addr, err)
	}
	return &Resource{c: c, prefix: prefix}, nil
}

func (r *Resource) Close() { r.c.Close() }

func (r *Resource) key(parts ...string) string { return r.prefix + strings.Join(parts, ":") }

func (r *Resource) k(idx uint64, kind string) string {
	return r.prefix + kind + ":" + strconv.FormatUint(idx, 10)
}

// Token is the next fencing token.
func (r *Resource) Token(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	return r.c.Do(ctx, r.c.B().Incr().Key(r.key("fence")).Build()).AsInt64()
}

// Read returns key idx's history as a write needs it, its length and last
// id; ok is false when a fenced read was refused.
func (r *Resource) Read(ctx context.Context, idx uint64, token int64) (n int64, last string, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	var res []rueidis.RedisMessage
	if token == 0 {
		res, err = readScript.Exec(ctx, r.c, []string{r.k(idx, "res")}, nil).ToArray()
	} else {
		res, err = fencedReadScript.Exec(ctx, r.c, []string{r.k(idx, "res"), r.k(idx, "hi"), r.key("rej", "r")},
			[]string{strconv.FormatInt(token, 10)}).ToArray()
	}
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("resource: a read answered %d values, want {length, last id}", len(res))
	}
	if err != nil {
		return 0, "", false, err
	}
	n, err = res[0].AsInt64()
	if err == nil {
		last, err = res[1].ToString()
	}
	return n, last, err == nil && n >= 0, err
}

// Write puts id after the first read entries of key idx's history (what
// the writer read); applied is false when a fenced write was refused,
// dropped is how many entries it cut.
func (r *Resource) Write(ctx context.Context, idx uint64, id string, read, token int64) (applied bool, dropped int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	n := strconv.FormatInt(read, 10)
	if token == 0 {
		dropped, err = writeScript.Exec(ctx, r.c, []string{r.k(idx, "res")}, []string{id, n}).AsInt64()
		return err == nil, dropped, err
	}
	res, err := fencedWriteScript.Exec(ctx, r.c, []string{r.k(idx, "res"), r.k(idx, "hi")},
		[]string{id, n, strconv.FormatInt(token, 10)}).AsIntSlice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("resource: fenced write answered %v, want {applied, dropped}", res)
	}
	if err != nil {
		return false, 0, err
	}
	return res[0] == 1, res[1], nil
}

// Histories reads the final history of keys 0 … keys−1, in pipelined
// batches of LRANGEs.
func (r *Resource) Histories(ctx context.Context, keys uint64) (map[uint64][]string, error) {
	const chunk = 1000
	out := make(map[uint64][]string)
	for lo := uint64(0); lo < keys; lo += chunk {
		hi := min(lo+chunk, keys)
		cmds := make(rueidis.Commands, 0, hi-lo)
		for i := lo; i < hi; i++ {
			cmds = append(cmds, r.c.B().Lrange().Key(r.k(i, "res")).Start(0).Stop(-1).Build())
		}
		for i, res := range r.c.DoMulti(ctx, cmds...) {
			h, err := res.AsStrSlice()
			if err != nil {
				return nil, fmt.Errorf("resource: LRANGE %s: %w", r.k(lo+uint64(i), "res"), err)
			}
			if len(h) > 0 {
				out[lo+uint64(i)] = h
			}
		}
	}
	return out, nil
}
