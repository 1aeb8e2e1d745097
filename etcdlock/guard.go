package etcdlock

import (
	"context"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"lockbench/lock"
)

// The guarded write etcd's users are told to use: the protected value
// kept in etcd itself and written in one txn whose condition is that the
// writer's lock key still stands at its revision (mutex.IsOwner()), so a
// holder whose lease ended cannot write.

// GuardedRead reads key's counter (0 when unset).
func (l *Locker) GuardedRead(ctx context.Context, _ *lock.Lock, key string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	l.rpcs.Add(1)
	r, err := l.cli.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	return counterOf(r.Kvs), nil
}

// GuardedWrite puts v in one txn If(IsOwner()) Then(Get, Put): refused
// (not written) when the lock's key is gone; prev is what the Get saw.
func (l *Locker) GuardedWrite(ctx context.Context, lk *lock.Lock, key string, v int64) (bool, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	h := lk.Handle.(held)
	l.rpcs.Add(1)
	r, err := l.cli.Txn(ctx).If(h.m.IsOwner()).Then(clientv3.OpGet(key), clientv3.OpPut(key, strconv.FormatInt(v, 10))).Commit()
	if err != nil {
		return false, 0, err
	}
	if !r.Succeeded {
		return false, 0, nil
	}
	return true, counterOf(r.Responses[0].GetResponseRange().Kvs), nil
}

func counterOf[KV interface{ GetValue() []byte }](kvs []KV) int64 {
	if len(kvs) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(kvs[0].GetValue()), 10, 64)
	return n
}
