package bench

import (
	"lockbench/etcdlock"
	"lockbench/faults"
	"lockbench/zklock"
)

// zookeeperPeers is a ZooKeeper ensemble's PeerVia: a proxy on every
// ordered pair of members' links, the election links' first message
// rewritten to name them (so that a dial-back goes through them too).
func zookeeperPeers(listen [][]string, hello zklock.Hello) (zklock.PeerNet, error) {
	n, err := faults.NewMemberNet(listen)
	if err != nil {
		return nil, err
	}
	if err := n.Greet(1, hello); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// The services' member links are what a partition with link: members cuts.
var (
	_ faults.Links = (*zklock.PeerLinks)(nil)
	_ faults.Links = (*etcdlock.PeerGates)(nil)
)
