package faultproxy

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// Match selects commands by their words (the command name first, as the
// client sent it).
type Match func(words []string) bool

// Command matches commands named name (any case).
func Command(name string) Match {
	return func(w []string) bool { return len(w) > 0 && strings.EqualFold(w[0], name) }
}

// Script matches runs of s, by EVALSHA or EVAL.
func Script(s *driver.Script) Match {
	return func(w []string) bool {
		if len(w) < 2 {
			return false
		}
		return (strings.EqualFold(w[0], "EVALSHA") && w[1] == s.Hash()) ||
			(strings.EqualFold(w[0], "EVAL") && w[1] == s.Source())
	}
}

// Any matches every command.
func Any(words []string) bool { return len(words) > 0 }

// After is what the proxy does to a client connection once it has dropped
// a reply on it.
type After int

const (
	// Close closes the connection: the client sees it end after its
	// command reached the server.
	Close After = iota
	// Hang keeps the connection open and silent: no reply comes any more,
	// so the client waits until its own timeout.
	Hang
)

// Proxy is a loopback TCP proxy in front of one Redis server. It is safe
// for concurrent use.
type Proxy struct {
	tb       testing.TB
	upstream atomic.Pointer[string] // the server new connections dial
	ln       net.Listener
	wg       sync.WaitGroup

	delay   atomic.Int64 // nanoseconds added before each frame, both ways
	down    atomic.Bool
	dropped atomic.Int64

	mu     sync.Mutex
	conns  map[*conn]struct{}
	rules  []*rule
	holds  []*hold
	counts []*counter
	closed bool
}

type rule struct {
	match Match
	left  int // < 0: forever
	then  After
}

// hold is a Hold rule: the next command matching match is held for d.
type hold struct {
	match Match
	d     time.Duration
}

type counter struct {
	match Match
	n     atomic.Int64
}

// Start starts a proxy to upstream on a free loopback port; it stops when
// the test ends.
func Start(tb testing.TB, upstream string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("faultproxy: listen: %v", err)
	}
	p := &Proxy{tb: tb, ln: ln, conns: map[*conn]struct{}{}}
	p.upstream.Store(&upstream)
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address, for the client under test.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and closes every connection. It is called when the
// test ends; calling it earlier is allowed.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

// Cut closes every open connection now, both sides. New connections are
// accepted as before (see Down).
func (p *Proxy) Cut() {
	p.mu.Lock()
	cs := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
}

// Down makes the proxy close every new connection at once (and, when down
// is true, cuts the open ones): Redis looks unreachable until Down(false).
func (p *Proxy) Down(down bool) {
	p.down.Store(down)
	if down {
		p.Cut()
	}
}

// Retarget points the proxy at another server, as a failover does behind a
// client's unchanged address: connections opened from now on dial
// upstream, and the open ones are cut (they went to the old server).
func (p *Proxy) Retarget(upstream string) {
	p.upstream.Store(&upstream)
	p.Cut()
}

// Delay adds d before each frame is passed on, in both directions (0: none).
func (p *Proxy) Delay(d time.Duration) { p.delay.Store(int64(d)) }

// DropReply makes the proxy forward the next times commands that match m
// (times < 0: all of them) to the server and drop their replies, then do
// then to the client's connection.
func (p *Proxy) DropReply(m Match, times int, then After) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &rule{match: m, left: times, then: then})
}

// Hold makes the proxy hold the next command that matches m for d before
// it forwards it to the server — also when the client closed its connection
// meanwhile: a command that reaches the server after its client gave up
// (held in the network, say). Commands after it on that connection wait
// behind it; other connections pass at once.
func (p *Proxy) Hold(m Match, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds = append(p.holds, &hold{match: m, d: d})
}

// ClearRules removes every DropReply and Hold rule still pending.
func (p *Proxy) ClearRules() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
	p.holds = nil
}

// held is how long to hold a command (0: not at all), by the Hold rules.
func (p *Proxy) held(words []string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, h := range p.holds {
		if h.match(words) {
			p.holds = append(p.holds[:i:i], p.holds[i+1:]...)
			return h.d
		}
	}
	return 0
}

// Dropped is how many replies the proxy has dropped so far.
func (p *Proxy) Dropped() int { return int(p.dropped.Load()) }

// Count returns a function that reports how many commands matching m the
// proxy has forwarded to the server since Count was called.
func (p *Proxy) Count(m Match) func() int {
	c := &counter{match: m}
	p.mu.Lock()
	p.counts = append(p.counts, c)
	p.mu.Unlock()
	return func() int { return int(c.n.Load()) }
}

// decide returns what to do with the reply of a command: drop it (and what
// then) or pass it on.
func (p *Proxy) decide(words []string) (drop bool, then After) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.counts {
		if c.match(words) {
			c.n.Add(1)
		}
	}
	for i, r := range p.rules {
		if r.left == 0 || !r.match(words) {
			continue
		}
		if r.left > 0 {
			r.left--
		}
		if r.left == 0 {
			p.rules = append(p.rules[:i:i], p.rules[i+1:]...)
		}
		return true, r.then
	}
	return false, Close
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		cc, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			_ = cc.Close()
			continue
		}
		sc, err := net.DialTimeout("tcp", *p.upstream.Load(), 5*time.Second)
		if err != nil {
			_ = cc.Close()
			continue
		}
		c := &conn{p: p, client: cc, server: sc}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = cc.Close()
			_ = sc.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go c.requests()
		go c.replies()
	}
}

// conn is one client connection and its connection to the server.
type conn struct {
	p              *Proxy
	client, server net.Conn
	once           sync.Once

	mu      sync.Mutex
	pending []reply // one per command forwarded whose reply is due
	through bool    // subscribed: replies no longer follow commands
	hung    bool
}

type reply struct {
	drop bool
	then After
}

func (c *conn) close() {
	c.once.Do(func() {
		_ = c.client.Close()
		_ = c.server.Close()
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	})
}

func (c *conn) sleep() {
	if d := time.Duration(c.p.delay.Load()); d > 0 {
		time.Sleep(d)
	}
}

// requests passes the client's commands to the server.
func (c *conn) requests() {
	defer c.p.wg.Done()
	defer c.close()
	r := bufio.NewReader(c.client)
	var raw bytes.Buffer
	for {
		raw.Reset()
		words, _, err := readFrame(r, &raw, true)
		if err != nil {
			return
		}
		drop, then := c.p.decide(words)
		c.mu.Lock()
		if len(words) > 0 {
			switch strings.ToUpper(words[0]) {
			case "SUBSCRIBE", "SSUBSCRIBE", "PSUBSCRIBE", "MONITOR":
				c.through = true
			}
		}
		if !c.through {
			c.pending = append(c.pending, reply{drop: drop, then: then})
		}
		c.mu.Unlock()
		c.sleep()
		if d := c.p.held(words); d > 0 {
			time.Sleep(d)
		}
		if _, err := c.server.Write(raw.Bytes()); err != nil {
			return
		}
	}
}

// replies passes the server's replies to the client, dropping those the
// rules say.
func (c *conn) replies() {
	defer c.p.wg.Done()
	defer c.close()
	r := bufio.NewReader(c.server)
	var raw bytes.Buffer
	for {
		raw.Reset()
		_, kind, err := readFrame(r, &raw, false)
		if err != nil {
			return
		}
		c.mu.Lock()
		var rp reply
		if kind != '>' && !c.through && len(c.pending) > 0 {
			rp, c.pending = c.pending[0], c.pending[1:]
		}
		hung := c.hung
		if rp.drop && rp.then == Hang {
			c.hung = true
		}
		c.mu.Unlock()
		if rp.drop {
			c.p.dropped.Add(1)
			if rp.then == Close {
				return
			}
			continue
		}
		if hung {
			continue
		}
		c.sleep()
		if _, err := c.client.Write(raw.Bytes()); err != nil {
			return
		}
	}
}
