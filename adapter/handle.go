package adapter

import (
	"fmt"
	"time"
)

// replies are the reply types each request takes (error: a request the
// adapter does not know).
var replies = map[string]map[string]bool{
	TypeHello:   {TypeHelloOK: true, TypeError: true},
	TypeAcquire: {TypeGranted: true, TypeRefused: true, TypeFailed: true, TypeError: true},
	TypeRelease: {TypeReleased: true, TypeRefused: true, TypeFailed: true, TypeError: true},
	TypeExtend:  {TypeExtended: true, TypeRefused: true, TypeFailed: true, TypeError: true},
}

// accepts says reply answers a request of type typ; a request the
// protocol does not know takes only error.
func accepts(typ, reply string) bool {
	if r, known := replies[typ]; known {
		return r[reply]
	}
	return reply == TypeError
}

// handle is one line from the adapter, received at at. A line that breaks
// the protocol breaks the client, named with its first bytes.
func (c *Client) handle(line []byte, at time.Time) {
	c.trace("< ", line)
	var m Msg
	if err := decodeMsg(line, &m); err != nil || m.Type == "" {
		c.fail(fmt.Errorf("adapter %s: malformed line %s on stdout (stdout carries protocol lines only; logs go to stderr)", c.name(), firstBytes(line)))
		return
	}
	if m.Type == TypeLost {
		c.lost(m, line)
		return
	}
	if err := c.deliver(m, at); err != nil {
		c.fail(fmt.Errorf("adapter %s: %v: %s", c.name(), err, firstBytes(line)))
	}
}

// deliver hands a reply to the request it answers.
func (c *Client) deliver(m Msg, at time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	req, ok := c.pending[m.InReplyTo]
	switch {
	case m.InReplyTo == 0:
		return fmt.Errorf("%s without in_reply_to", m.Type)
	case !ok:
		return fmt.Errorf("reply to id %d, which no request is waiting for (unknown, or answered already)", m.InReplyTo)
	case !accepts(req.typ, m.Type):
		return fmt.Errorf("%s is no answer to %s %d", m.Type, req.typ, req.id)
	case m.Type == TypeGranted && m.Token == "":
		return fmt.Errorf("granted without a token")
	case m.Type == TypeGranted && c.held[m.Token] != nil:
		return fmt.Errorf("granted token %q, which is held already", m.Token)
	}
	delete(c.pending, m.InReplyTo)
	if m.Type == TypeFailed && m.Definite != nil && !*m.Definite {
		c.indefinite.Add(1)
	}
	if m.Type == TypeGranted {
		h := &heldLock{key: req.key, lost: make(chan struct{})}
		c.held[m.Token] = h
		if req.abandoned {
			c.lateGrants.Add(1)
			go c.releaseLate(req.key, m.Token)
			return nil
		}
	}
	if req.reply != nil && !req.abandoned {
		req.reply <- reply{m: m, at: at}
	}
	return nil
}

// lost is the adapter's notice that a lock ended under its holder: its
// lock's Lost closes. A token never granted is a protocol error; one
// released already is late news.
func (c *Client) lost(m Msg, line []byte) {
	c.mu.Lock()
	h := c.held[m.Token]
	known := h != nil || c.gone[0][m.Token] || c.gone[1][m.Token]
	c.mu.Unlock()
	if !known {
		c.fail(fmt.Errorf("adapter %s: lost for token %q, which was never granted: %s", c.name(), m.Token, firstBytes(line)))
		return
	}
	if h != nil {
		h.lostOnce.Do(func() { close(h.lost) })
	}
}

// forget moves a released token to the recent ones (a lost may still
// name it); the older generation goes when the newer fills.
func (c *Client) forget(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, token)
	if len(c.gone[0]) >= 4096 {
		c.gone[1], c.gone[0] = c.gone[0], map[string]bool{}
	}
	c.gone[0][token] = true
}

// releaseLate releases a grant nobody waited for.
func (c *Client) releaseLate(key, token string) {
	req := &request{typ: TypeRelease, key: key, internal: true, wait: 0}
	if c.send(req, Msg{Type: TypeRelease, Key: key, Token: token}) == nil {
		c.forget(token)
	}
}
