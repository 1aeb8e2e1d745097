package zklock

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"lockbench/lock"
)

// The guarded write on ZooKeeper: the protected value kept in a znode and
// set in one multi that checks the holder's lock znode still exists (its
// session alive, the lock not handed on) and sets the value only at the
// version the holder read. Counters live only on the servers a fault cell
// starts for itself, which go with it.

// GuardedRead reads key's history znode ("" when it does not exist yet),
// keeping its version on the session for the write.
func (l *Locker) GuardedRead(_ context.Context, lk *lock.Lock, key string) (string, error) {
	s := lk.Handle.(held).s
	l.rpcs.Add(1)
	data, st, err := s.conn.Get(historyPath(key))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		s.readVersion = noHistory
		return "", nil
	case err != nil:
		return "", err
	}
	s.readVersion = st.Version
	return string(data), nil
}

// FinalRead reads key's history on any session, without a lock (after a
// sync, so that the server answering has every committed write).
func (l *Locker) FinalRead(ctx context.Context, key string) (string, error) {
	var v string
	err := l.with(ctx, func(s *session) error {
		if _, err := s.conn.Sync(historyPath(key)); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		data, _, err := s.conn.Get(historyPath(key))
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		v = string(data)
		return err
	})
	return v, err
}

// noHistory is a read that found no history znode: the write creates it.
const noHistory = -2

// historyPath is key's history znode, beside lockbench's lock containers.
func historyPath(key string) string { return dir("history:" + key) }

// GuardedWrite sets the history to v in one multi: check the holder
// znode, then set (or create) the history at the version read. Refused
// (nothing written) when the lock znode is gone, the session ended, or the
// history moved since the read.
func (l *Locker) GuardedWrite(_ context.Context, lk *lock.Lock, key, v string) (bool, error) {
	h := lk.Handle.(held)
	s := h.s
	var set any = &zk.SetDataRequest{Path: historyPath(key), Data: []byte(v), Version: s.readVersion}
	if s.readVersion == noHistory {
		set = &zk.CreateRequest{Path: historyPath(key), Data: []byte(v), Acl: zk.WorldACL(zk.PermAll)}
	}
	l.rpcs.Add(1)
	res, err := s.conn.Multi(&zk.CheckVersionRequest{Path: h.path, Version: -1}, set)
	if err == nil {
		return true, nil
	}
	for _, r := range res {
		err = errors.Join(err, r.Error)
	}
	for _, refused := range []error{zk.ErrNoNode, zk.ErrBadVersion, zk.ErrNodeExists, zk.ErrSessionExpired} {
		if errors.Is(err, refused) {
			return false, nil
		}
	}
	return false, err
}
