package delayproxy

import (
	"errors"
	"net"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Proxy passes connections to one server with a fixed delay each way.
type Proxy struct {
	ln       net.Listener
	upstream string
	oneWay   int64 // ns

	queues [2]chan chunk // to the server, to the client
	done   chan struct{}
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[*pair]struct{}
	closed bool
}

// pair is a client connection and its connection to the server.
type pair struct {
	proxy          *Proxy
	client, server net.Conn
	once           sync.Once
}

// close closes both connections and forgets the pair.
func (c *pair) close() {
	c.once.Do(func() {
		_ = c.client.Close()
		_ = c.server.Close()
		c.proxy.mu.Lock()
		delete(c.proxy.conns, c)
		c.proxy.mu.Unlock()
	})
}

// chunk is bytes read from one side, due at the other at due (CLOCK_MONOTONIC
// ns); fin closes the pair when due (the side it came from ended).
type chunk struct {
	due  int64
	to   net.Conn
	p    *pair
	data []byte
	fin  bool
}

// queueLen bounds the chunks in flight each way; a reader blocks beyond it.
const queueLen = 1 << 16

// Start listens on a free loopback port and passes each connection to
// upstream, adding rtt/2 each way.
func Start(upstream string, rtt time.Duration) (*Proxy, error) {
	if rtt < 0 {
		return nil, errors.New("delayproxy: negative round trip")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, oneWay: int64(rtt / 2), done: make(chan struct{}), conns: map[*pair]struct{}{}}
	for i := range p.queues {
		p.queues[i] = make(chan chunk, queueLen)
		p.wg.Add(1)
		go p.deliver(p.queues[i])
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	open := make([]*pair, 0, len(p.conns))
	for c := range p.conns {
		open = append(open, c)
	}
	p.mu.Unlock()
	for _, c := range open {
		c.close()
	}
	_ = p.ln.Close()
	close(p.done)
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		cc, err := p.ln.Accept()
		if err != nil {
			return
		}
		sc, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
		if err != nil {
			_ = cc.Close()
			continue
		}
		c := &pair{proxy: p, client: cc, server: sc}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.close()
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.read(c, cc, sc, p.queues[0])
		go p.read(c, sc, cc, p.queues[1])
	}
}

// now is CLOCK_MONOTONIC in ns, the clock the deliverers sleep on.
func now() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// read stamps what arrives from src and queues it for dst.
func (p *Proxy) read(c *pair, src, dst net.Conn, q chan<- chunk) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		due := now() + p.oneWay
		var ch chunk
		if n > 0 {
			ch = chunk{due: due, to: dst, p: c, data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			if n > 0 {
				p.send(q, ch)
			}
			// The pair closes when this is due, or when the proxy closes.
			p.send(q, chunk{due: due, to: dst, p: c, fin: true})
			return
		}
		if !p.send(q, ch) {
			return
		}
	}
}

func (p *Proxy) send(q chan<- chunk, ch chunk) bool {
	select {
	case q <- ch:
		return true
	case <-p.done:
		return false
	}
}

// deliver writes each chunk of q when it is due, in order: every chunk is
// delayed by the same time, so they fall due in the order they came. It
// sleeps on a thread of its own with a timer slack of 1 ns.
func (p *Proxy) deliver(q <-chan chunk) {
	defer p.wg.Done()
	// Locked for good: the goroutine returns with the thread locked, which
	// ends the thread, so no other goroutine inherits its timer slack.
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	for {
		var ch chunk
		select {
		case ch = <-q:
		case <-p.done:
			return
		}
		sleepUntil(ch.due)
		if ch.fin {
			ch.p.close()
			continue
		}
		if _, err := ch.to.Write(ch.data); err != nil {
			ch.p.close()
		}
	}
}

// sleepUntil sleeps until CLOCK_MONOTONIC reaches due (ns).
func sleepUntil(due int64) {
	if due <= now() {
		return
	}
	ts := unix.NsecToTimespec(due)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
	}
}
