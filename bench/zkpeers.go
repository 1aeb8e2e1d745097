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
// lat (0: none) on every link's replies; the proxies go to *keep (for a
// latency fault). Its goroutines are labelled so that their CPU is told
// apart.
func zookeeperPeers(lat time.Duration, keep **faults.MemberNet) func(listen [][]string, hello zklock.Hello) (zklock.PeerNet, error) {
	return func(listen [][]string, hello zklock.Hello) (zklock.PeerNet, error) {
		var n *faults.MemberNet
		var err error
		withProxyLabel(func() { n, err = newMemberNet(listen, hello, lat) })
		if err != nil {
			return nil, err // no typed nil in the interface
		}
		*keep = n
		return n, nil
	}
}

func newMemberNet(listen [][]string, hello zklock.Hello, lat time.Duration) (*faults.MemberNet, error) {
	n, err := faults.NewMemberNet(listen)
	if err != nil {
		return nil, err
	}
	if err = n.Greet(1, hello); err == nil && lat > 0 {
		err = n.Delay(lat, 0)
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
