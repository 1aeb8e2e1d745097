package etcdlock

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"lockbench/lock"
)

// The guarded write etcd's users are told to use: the protected value
// kept in etcd itself and written in one txn whose condition is that the
// writer's lock key still stands at its revision (mutex.IsOwner()), so a
// holder whose lease ended cannot write.

// GuardedRead reads key's history ("" when unset).
func (l *Locker) GuardedRead(ctx context.Context, _ *lock.Lock, key string) (string, error) {
	return l.FinalRead(ctx, key)
}

// FinalRead reads key's history, without a lock (a linearizable read: the
// leader's as it stands).
func (l *Locker) FinalRead(ctx context.Context, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	l.rpcs.Add(1)
	r, err := l.cli.Get(ctx, key)
	if err != nil || len(r.Kvs) == 0 {
		return "", err
	}
	return string(r.Kvs[0].Value), nil
}

// GuardedWrite puts v in one txn If(IsOwner()) Then(Put): refused (not
// written) when the lock's key is gone.
func (l *Locker) GuardedWrite(ctx context.Context, lk *lock.Lock, key, v string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	h := lk.Handle.(held)
	l.rpcs.Add(1)
	r, err := l.cli.Txn(ctx).If(h.m.IsOwner()).Then(clientv3.OpPut(key, v)).Commit()
	if err != nil {
		return false, err
	}
	return r.Succeeded, nil
}
