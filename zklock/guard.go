package zklock

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-zookeeper/zk"

	"lockbench/lock"
)

// The guarded write on ZooKeeper: the protected value kept in a znode and
// set in one multi that checks the holder's lock znode still exists (its
// session alive, the lock not handed on) and sets the value only at the
// version the holder read. Counters live only on the servers a fault cell
// starts for itself, which go with it.

// GuardedRead reads key's counter znode (0 when it does not exist yet),
// keeping its value and version on the session for the write.
func (l *Locker) GuardedRead(_ context.Context, lk *lock.Lock, key string) (int64, error) {
	s := lk.Handle.(held).s
	l.rpcs.Add(1)
	data, st, err := s.conn.Get(counterPath(key))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		s.readVersion, s.readValue = noCounter, 0
		return 0, nil
	case err != nil:
		return 0, err
	}
	n, _ := strconv.ParseInt(string(data), 10, 64)
	s.readVersion, s.readValue = st.Version, n
	return n, nil
}

// noCounter is a read that found no counter znode: the write creates it.
const noCounter = -2

// counterPath is key's counter znode, beside lockbench's lock containers.
func counterPath(key string) string { return dir("counter:" + key) }

// GuardedWrite sets the counter to v in one multi: check the holder znode,
// then set (or create) the counter at the version read. Refused (nothing
// written) when the lock znode is gone, the session ended, or the counter
// moved since the read; prev is the value read.
func (l *Locker) GuardedWrite(_ context.Context, lk *lock.Lock, key string, v int64) (bool, int64, error) {
	h := lk.Handle.(held)
	s := h.s
	data := []byte(strconv.FormatInt(v, 10))
	var set any = &zk.SetDataRequest{Path: counterPath(key), Data: data, Version: s.readVersion}
	if s.readVersion == noCounter {
		set = &zk.CreateRequest{Path: counterPath(key), Data: data, Acl: zk.WorldACL(zk.PermAll)}
	}
	l.rpcs.Add(1)
	res, err := s.conn.Multi(&zk.CheckVersionRequest{Path: h.path, Version: -1}, set)
	if err == nil {
		return true, s.readValue, nil
	}
	for _, r := range res {
		err = errors.Join(err, r.Error)
	}
	for _, refused := range []error{zk.ErrNoNode, zk.ErrBadVersion, zk.ErrNodeExists, zk.ErrSessionExpired} {
		if errors.Is(err, refused) {
			return false, 0, nil
		}
	}
	return false, 0, err
}
