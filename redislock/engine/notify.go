package engine

// Strategy notify, Redisson's way: a release runs releaseNotifyScript,
// which also PUBLISHes on NotifyChannel(key) on every master, and a waiter
// sleeps until a message from any master or its timeout, then tries again.
// Each engine keeps one pub/sub connection per master (lent by the
// master's client, rueidis Dedicate + SetPubSubHooks) shared by all its
// waiters: a channel is subscribed when its first waiter arrives and
// unsubscribed when its last leaves. The hook runs on rueidis' reader
// goroutine and only does non-blocking sends to the channel's waiters, so a
// message costs no goroutine; one goroutine per master watches its
// connection and one sends the UNSUBSCRIBEs.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// After a lost pub/sub connection, redial after reconnectMin, doubling up
// to reconnectMax while it fails: a down master is not hammered.
const (
	reconnectMin = 100 * time.Millisecond
	reconnectMax = 2 * time.Second
)

// NotifyCounts are strategy notify's counts since New, for commands per
// lock and to show lost notifications.
type NotifyCounts struct {
	WokenByMessage int64 // waits ended by a release message
	WokenByTimeout int64 // waits ended by NotifyTimeout (or the wait time left)
	Subscribes     int64 // SUBSCRIBE commands sent, over all masters
	Unsubscribes   int64 // UNSUBSCRIBE commands sent, over all masters
	Publishes      int64 // PUBLISHes by releases: notify releases that freed the key, per master
	Messages       int64 // messages the pub/sub connections received
	Reconnects     int64 // pub/sub connections dialled again after a loss
	// Waiting is the waiters blocked for a message right now (a gauge):
	// a test releases once its waiter waits, instead of after a sleep.
	Waiting int64
}

// NotifyCounts returns the notify counts (zero unless strategy notify).
func (e *Engine) NotifyCounts() NotifyCounts {
	c := NotifyCounts{Publishes: e.publishes.Load()}
	if n := e.notify; n != nil {
		c.WokenByMessage, c.WokenByTimeout = n.byMessage.Load(), n.byTimeout.Load()
		c.Subscribes, c.Unsubscribes = n.subscribes.Load(), n.unsubscribes.Load()
		c.Messages, c.Reconnects = n.messages.Load(), n.reconnects.Load()
		c.Waiting = n.waiting.Load()
	}
	return c
}

// notifier is an engine's pub/sub side: its connections and waiters.
type notifier struct {
	links   []*pubsubLink
	timeout time.Duration // of one SUBSCRIBE or UNSUBSCRIBE on one master

	mu      sync.RWMutex
	topics  map[string]*topic // by channel
	leaving []string          // channels whose last waiter left
	kick    chan struct{}     // one slot: "leaving has channels"
	stop    chan struct{}
	wg      sync.WaitGroup

	byMessage, byTimeout, subscribes, unsubscribes, messages, reconnects atomic.Int64
	waiting                                                              atomic.Int64
}

// topic is one channel's waiters.
type topic struct {
	waiters map[*subscription]struct{}
	ready   chan struct{} // closed once every master answered the SUBSCRIBE (or timed out)
	// recent are the last released tokens and the waiter each woke: one
	// release publishes on every master and wakes one waiter, not N.
	recent  [8]woken
	next    int
	leaving bool          // no waiter left; queued for UNSUBSCRIBE
	gone    chan struct{} // set as the UNSUBSCRIBE is sent, closed once answered
}

// startNotifier connects a pub/sub connection to every master.
func startNotifier(links []*link, timeout time.Duration) (*notifier, error) {
	n := &notifier{timeout: timeout, topics: map[string]*topic{}, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	lost := make([]<-chan error, len(links))
	for i, l := range links {
		p := &pubsubLink{n: n, client: l.client}
		n.links = append(n.links, p)
		var err error
		if lost[i], err = p.connect(); err != nil {
			n.close()
			return nil, fmt.Errorf("master %s: pub/sub connection: %w", l.addr, err)
		}
	}
	n.wg.Add(1 + len(n.links))
	go n.unsubscriber()
	for i, p := range n.links {
		go p.watch(lost[i])
	}
	return n, nil
}

// close stops the goroutines and closes the connections: once to end
// commands in flight, once more for a redial that ended as it stopped.
func (n *notifier) close() {
	close(n.stop)
	for range 2 {
		for _, p := range n.links {
			p.drop()
		}
		n.wg.Wait()
	}
}

// woken is a released token and the waiter its first message woke.
type woken struct {
	token string
	s     *subscription
}

// deliver is the pub/sub hook. Like Redisson's semaphore, a release wakes
// one waiter of the engine, not all of them (a herd that would retry
// together and all but one lose again): the first message of a freed
// token wakes one waiter not yet woken, without blocking, and not the one
// whose own attempt's token it is. The token's messages from the other
// masters wake that same waiter again (its retry may have reached a master
// before the release did), or another if it left.
func (n *notifier) deliver(m rueidis.PubSubMessage) {
	n.messages.Add(1)
	token := m.Message
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.topics[m.Channel]
	if t == nil {
		return
	}
	i := slices.IndexFunc(t.recent[:], func(w woken) bool { return w.token == token })
	if i >= 0 {
		if _, waiting := t.waiters[t.recent[i].s]; waiting {
			t.recent[i].s.wake()
			return
		}
	}
	if s := t.wakeOne(token); s != nil {
		if i < 0 {
			i = t.next % len(t.recent)
			t.next++
		}
		t.recent[i] = woken{token, s}
	}
}

// wakeOne wakes a waiter not yet woken whose attempts did not free token.
func (t *topic) wakeOne(token string) *subscription {
	for s := range t.waiters {
		if !strings.HasPrefix(token, s.family) && s.wake() {
			return s
		}
	}
	return nil
}

// subscribe registers a waiter on key's channel, subscribing it on every
// master if it is the first; it returns once the subscription is in place.
// Releases of tokens starting with family (its own attempts) do not wake it.
func (n *notifier) subscribe(key, family string) Subscription {
	s := &subscription{n: n, name: NotifyChannel(key), family: family, ch: make(chan struct{}, 1)}
	for {
		t, first, gone := n.join(s)
		if gone != nil { // being unsubscribed: join again after
			<-gone
			continue
		}
		if first {
			n.each(func(p *pubsubLink) { p.send(true, []string{s.name}) })
			close(t.ready)
		}
		<-t.ready
		s.t = t
		return s
	}
}

// join adds s to its channel's topic: first when it made the topic; gone
// when the channel's UNSUBSCRIBE is in flight.
func (n *notifier) join(s *subscription) (t *topic, first bool, gone chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t = n.topics[s.name]
	if t != nil && t.gone != nil {
		return nil, false, t.gone
	}
	if t == nil {
		t, first = &topic{waiters: map[*subscription]struct{}{}, ready: make(chan struct{})}, true
		n.topics[s.name] = t
	}
	t.leaving = false // back before its UNSUBSCRIBE was sent: still subscribed
	t.waiters[s] = struct{}{}
	return t, first, nil
}

// leave removes a waiter, handing a wake-up it did not use to another;
// the last one queues the UNSUBSCRIBE, sent by the unsubscriber so that
// the acquire does not wait for it.
func (n *notifier) leave(s *subscription) {
	n.mu.Lock()
	delete(s.t.waiters, s)
	select { // a wake-up it did not use goes to another waiter, or the release is lost on it
	case <-s.ch:
		s.t.wakeOne("")
	default:
	}
	last := len(s.t.waiters) == 0 && !s.t.leaving
	if last {
		s.t.leaving = true
		n.leaving = append(n.leaving, s.name)
	}
	n.mu.Unlock()
	if last {
		select {
		case n.kick <- struct{}{}:
		default:
		}
	}
}

// unsubscriber sends the queued UNSUBSCRIBEs, several channels a command.
func (n *notifier) unsubscriber() {
	defer n.wg.Done()
	for {
		select {
		case <-n.kick:
		case <-n.stop:
			return
		}
		names, topics := n.takeLeaving()
		if len(names) == 0 {
			continue
		}
		n.each(func(p *pubsubLink) { p.send(false, names) })
		n.mu.Lock()
		for i, name := range names {
			delete(n.topics, name)
			close(topics[i].gone)
		}
		n.mu.Unlock()
	}
}

// takeLeaving marks the channels still without waiters as going.
func (n *notifier) takeLeaving() ([]string, []*topic) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var names []string
	var topics []*topic
	for _, name := range n.leaving {
		if t := n.topics[name]; t != nil && t.leaving && t.gone == nil {
			t.gone = make(chan struct{})
			names, topics = append(names, name), append(topics, t)
		}
	}
	n.leaving = n.leaving[:0]
	return names, topics
}

// current lists the channels subscribed now (for a new connection).
func (n *notifier) current() []string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	names := make([]string, 0, len(n.topics))
	for name, t := range n.topics {
		if t.gone == nil {
			names = append(names, name)
		}
	}
	return names
}

// each runs fn on every master's link at once.
func (n *notifier) each(fn func(*pubsubLink)) {
	var wg sync.WaitGroup
	for _, p := range n.links[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p)
		}()
	}
	fn(n.links[0])
	wg.Wait()
}

// pubsubLink is one master's pub/sub connection.
type pubsubLink struct {
	n      *notifier
	client rueidis.Client
	mu     sync.Mutex
	conn   rueidis.DedicatedClient // nil while lost
}

// connect takes a connection from the master's client for pub/sub with
// the hook installed; the channel reports its loss.
func (p *pubsubLink) connect() (<-chan error, error) {
	c, _ := p.client.Dedicate()
	lost := c.SetPubSubHooks(rueidis.PubSubHooks{OnMessage: p.n.deliver})
	select {
	case err := <-lost: // the dial failed
		c.Close()
		return nil, err
	default:
	}
	p.mu.Lock()
	p.conn = c
	p.mu.Unlock()
	return lost, nil
}

// drop closes the connection (a lost one goes back to the pool, which
// discards it).
func (p *pubsubLink) drop() {
	p.mu.Lock()
	c := p.conn
	p.conn = nil
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// watch redials a lost connection and subscribes the current channels on
// it; waiters meanwhile wake by their timeout.
func (p *pubsubLink) watch(lost <-chan error) {
	defer p.n.wg.Done()
	for {
		select {
		case <-lost:
		case <-p.n.stop:
			return
		}
		p.drop()
		if lost = p.redial(); lost == nil {
			return // stopped
		}
		p.n.reconnects.Add(1)
		// After connect: a channel joined from here on is subscribed on
		// the new connection by its first waiter, one joined before is listed.
		if names := p.n.current(); len(names) > 0 {
			p.send(true, names)
		}
	}
}

// redial connects again, backing off while it fails; nil when stopped.
func (p *pubsubLink) redial() <-chan error {
	for delay := reconnectMin; ; delay = min(2*delay, reconnectMax) {
		select {
		case <-time.After(delay):
		case <-p.n.stop:
			return nil
		}
		if lost, err := p.connect(); err == nil {
			return lost
		}
	}
}

// send SUBSCRIBEs (or UNSUBSCRIBEs) channels and waits for the answer, at
// most the timeout; on a lost connection nothing: watch resubscribes.
func (p *pubsubLink) send(sub bool, channels []string) {
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c == nil {
		return
	}
	var cmd rueidis.Completed
	if sub {
		cmd = c.B().Subscribe().Channel(channels...).Build()
		p.n.subscribes.Add(1)
	} else {
		cmd = c.B().Unsubscribe().Channel(channels...).Build()
		p.n.unsubscribes.Add(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.n.timeout)
	defer cancel()
	_ = c.Do(ctx, cmd).Error() // a failure leaves that master to the timeout
}

// subscription is one waiter: its wake-up slot on a topic.
type subscription struct {
	n            *notifier
	name, family string
	t            *topic
	ch           chan struct{} // one pending wake-up
}

func (s *subscription) Wait(ctx context.Context, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	s.n.waiting.Add(1)
	defer s.n.waiting.Add(-1)
	select {
	case <-s.ch:
		s.n.byMessage.Add(1)
		return true
	case <-t.C:
		s.n.byTimeout.Add(1)
	case <-ctx.Done():
	case <-s.n.stop: // the engine closes: its connections are gone
	}
	return false
}

func (s *subscription) Close() { s.n.leave(s) }

// wake fills the waiter's one wake-up slot; false when it was full (the
// waiter is woken already).
func (s *subscription) wake() bool {
	select {
	case s.ch <- struct{}{}:
		return true
	default:
		return false
	}
}
