package bench

import (
	"time"

	"lockbench/etcdlock"
	"lockbench/faults"
	"lockbench/zklock"
)

// zookeeperPeers is a ZooKeeper ensemble's PeerVia: a proxy on every
// ordered pair of members' links, the election links' first message
// rewritten to name them (so that a dial-back goes through them too), and
// lat (0: none) on every link's replies. Its goroutines are labelled so
// that their CPU is told apart.
func zookeeperPeers(lat time.Duration) func(listen [][]string, hello zklock.Hello) (zklock.PeerNet, error) {
	return func(listen [][]string, hello zklock.Hello) (pn zklock.PeerNet, err error) {
		withProxyLabel(func() { pn, err = newMemberNet(listen, hello, lat) })
		return pn, err
	}
}

func newMemberNet(listen [][]string, hello zklock.Hello, lat time.Duration) (*faults.MemberNet, error) {
	n, err := faults.NewMemberNet(listen)
	if err != nil {
		return nil, err
	}
	if err = n.Greet(1, hello); err == nil && lat > 0 {
		err = n.Delay(lat)
	}
	if err != nil {
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
