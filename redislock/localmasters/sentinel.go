package localmasters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"lockbench/internal/redisserver"
	"lockbench/redislock/engine"
)

// sentinelMap is a reply such as SENTINEL MASTER's, as field → value.
func sentinelMap(ctx context.Context, addr string, args ...string) (map[string]string, error) {
	m, err := redisserver.DoMessage(ctx, addr, args...)
	if err != nil {
		return nil, err
	}
	return m.AsStrMap()
}

// sentinelMaps is a reply such as SENTINEL REPLICAS', one map per entry.
func sentinelMaps(ctx context.Context, addr string, args ...string) ([]map[string]string, error) {
	m, err := redisserver.DoMessage(ctx, addr, args...)
	if err != nil {
		return nil, err
	}
	arr, err := m.ToArray()
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(arr))
	for _, e := range arr {
		em, err := e.AsStrMap()
		if err != nil {
			return nil, err
		}
		out = append(out, em)
	}
	return out, nil
}

// MasterAddrByName asks the Sentinel at addr where the master of set is
// (SENTINEL GET-MASTER-ADDR-BY-NAME); ErrNil when it does not know the set.
func MasterAddrByName(ctx context.Context, addr, set string) (string, error) {
	m, err := redisserver.DoMessage(ctx, addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", set)
	if err != nil {
		return "", err
	}
	hp, err := m.AsStrSlice()
	if err != nil {
		return "", err
	}
	if len(hp) != 2 {
		return "", fmt.Errorf("sentinel %s: get-master-addr-by-name %s answered %q", addr, set, hp)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// linkUp says a Sentinel's entry (replica or other Sentinel) is connected
// and not judged down.
func linkUp(entry map[string]string) bool {
	f := entry["flags"]
	return !strings.Contains(f, "disconnected") && !strings.Contains(f, "s_down") && !strings.Contains(f, "o_down")
}

// Switch is one +switch-master: Sentinel moved the set from From to To.
type Switch struct {
	At       time.Time // when the first Sentinel's message reached this process
	From, To string    // 127.0.0.1:PORT
	Sentinel string    // the Sentinel whose message came first
}

// switchWatch subscribes to +switch-master on every Sentinel. Each Sentinel
// announces the same switch, so a switch is recorded once, when a message
// first names a master other than the last one recorded.
type switchWatch struct {
	set    string
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	last     string
	switches []Switch
	changed  chan struct{} // closed and replaced at each switch
}

// subscribeTimeout bounds one Sentinel's subscription confirmation.
const subscribeTimeout = 5 * time.Second

// watchSwitches subscribes on every Sentinel and returns once each has
// confirmed, so that no switch after Start can be missed.
func watchSwitches(set, master string, sentinels []string) (*switchWatch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &switchWatch{set: set, cancel: cancel, last: master, changed: make(chan struct{})}
	ready := make(chan error, len(sentinels))
	for _, addr := range sentinels {
		w.wg.Add(1)
		go w.follow(ctx, addr, ready)
	}
	var errs []error
	for range sentinels {
		errs = append(errs, <-ready)
	}
	if err := errors.Join(errs...); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

// follow keeps a subscription on one Sentinel, resubscribing when its
// connection drops (a Sentinel killed and restarted by a fault), until
// the watch stops. ready gets the first subscription's result.
func (w *switchWatch) follow(ctx context.Context, addr string, ready chan<- error) {
	defer w.wg.Done()
	first := true
	for {
		err := w.subscribe(ctx, addr, func() {
			if first {
				first = false
				ready <- nil
			}
		})
		if first {
			ready <- fmt.Errorf("sentinel %s: subscribe +switch-master: %w", addr, err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// subscribe holds one subscription until its connection ends or ctx does;
// subscribed is called once the Sentinel confirmed it.
func (w *switchWatch) subscribe(ctx context.Context, addr string, subscribed func()) error {
	c, err := engine.NewSingleClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableRetry: true,
		Dialer: net.Dialer{Timeout: time.Second}})
	if err != nil {
		return err
	}
	defer c.Close()
	dc, release := c.Dedicate()
	defer release()
	confirmed := make(chan struct{}, 1)
	closed := dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(m rueidis.PubSubMessage) { w.record(addr, m.Message) },
		OnSubscription: func(s rueidis.PubSubSubscription) {
			if s.Kind == "subscribe" {
				select {
				case confirmed <- struct{}{}:
				default:
				}
			}
		},
	})
	if err := dc.Do(ctx, dc.B().Subscribe().Channel("+switch-master").Build()).Error(); err != nil {
		return err
	}
	select {
	case <-confirmed:
		subscribed()
	case err := <-closed:
		return cmpErr(err, "connection closed")
	case <-time.After(subscribeTimeout):
		return fmt.Errorf("no confirmation within %v", subscribeTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-closed:
		return cmpErr(err, "connection closed")
	case <-ctx.Done():
		return nil
	}
}

func cmpErr(err error, otherwise string) error {
	if err == nil {
		return errors.New(otherwise)
	}
	return err
}

// record files a message "<set> <old ip> <old port> <new ip> <new port>".
func (w *switchWatch) record(sentinel, msg string) {
	f := strings.Fields(msg)
	if len(f) != 5 || f[0] != w.set {
		return
	}
	at := time.Now()
	from, to := net.JoinHostPort(f[1], f[2]), net.JoinHostPort(f[3], f[4])
	w.mu.Lock()
	defer w.mu.Unlock()
	if to == w.last {
		return
	}
	w.last = to
	w.switches = append(w.switches, Switch{At: at, From: from, To: to, Sentinel: sentinel})
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *switchWatch) list() []Switch {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Switch(nil), w.switches...)
}

// wait returns the n-th switch (1-based) once it happened.
func (w *switchWatch) wait(ctx context.Context, n int) (Switch, error) {
	for {
		w.mu.Lock()
		if len(w.switches) >= n {
			s := w.switches[n-1]
			w.mu.Unlock()
			return s, nil
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Switch{}, fmt.Errorf("switch %d of master set %s: %w", n, w.set, ctx.Err())
		}
	}
}

func (w *switchWatch) stop() {
	w.cancel()
	w.wg.Wait()
}
