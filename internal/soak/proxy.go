package soak

import (
	"errors"
	"math/rand"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Faults is what the soak needs of a fault-injecting loopback proxy in
// front of one redis-server. Each worker's client dials its own proxy, so a
// fault hits one worker (one client process) at a time.
type Faults interface {
	// Addr is the address clients dial.
	Addr() string
	// Cut closes every connection open through the proxy and returns how
	// many it closed.
	Cut() int
	// SetLatency delays every chunk the client sends by a random duration
	// in [0, max) (0: no delay), keeping the order.
	SetLatency(max time.Duration)
	// DropReply forwards the next command to the server but drops its
	// reply, closing that connection: the command ran, its outcome never
	// reaches the client.
	DropReply()
	// Stall holds everything the clients send for d from now.
	Stall(d time.Duration)
	// Dropped is how many replies were dropped so far.
	Dropped() int64
	// Close closes the listener and every connection, and waits for the
	// proxy's goroutines.
	Close() error
}

// proxy is a minimal Faults: a TCP relay per connection, one goroutine per
// direction.
type proxy struct {
	ln       net.Listener
	upstream string
	done     chan struct{}
	wg       sync.WaitGroup

	latency    atomic.Int64 // max delay in ns
	stallUntil atomic.Int64 // UnixNano
	drops      atomic.Int64 // replies still to drop
	dropped    atomic.Int64

	mu     sync.Mutex
	conns  map[*relay]struct{}
	closed bool
}

type relay struct {
	client, server net.Conn
	drop           atomic.Bool
	once           sync.Once
}

func (r *relay) close() {
	r.once.Do(func() {
		_ = r.client.Close()
		_ = r.server.Close()
	})
}

// newProxy starts a proxy to upstream on a free loopback port.
func newProxy(upstream string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, upstream: upstream, done: make(chan struct{}), conns: map[*relay]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *proxy) Addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.DialTimeout("tcp", p.upstream, time.Second)
		if err != nil {
			_ = c.Close()
			continue
		}
		r := &relay{client: c, server: u}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			r.close()
			return
		}
		p.conns[r] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.up(r)
		go p.down(r)
	}
}

func (p *proxy) forget(r *relay) {
	r.close()
	p.mu.Lock()
	delete(p.conns, r)
	p.mu.Unlock()
}

// up relays client → server, delayed as the latency and stall say.
func (p *proxy) up(r *relay) {
	defer p.wg.Done()
	defer p.forget(r)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.client.Read(buf)
		if n > 0 {
			if !p.delay() {
				return
			}
			for {
				d := p.drops.Load()
				if d <= 0 {
					break
				}
				if p.drops.CompareAndSwap(d, d-1) {
					r.drop.Store(true)
					break
				}
			}
			if _, werr := r.server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// delay sleeps for the stall and a random latency; false when the proxy
// closed meanwhile.
func (p *proxy) delay() bool {
	d := time.Duration(p.stallUntil.Load() - time.Now().UnixNano())
	if d < 0 {
		d = 0
	}
	if m := p.latency.Load(); m > 0 {
		d += time.Duration(rand.Int63n(m))
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.done:
		return false
	}
}

// down relays server → client; a reply marked for dropping closes the
// connection instead.
func (p *proxy) down(r *relay) {
	defer p.wg.Done()
	defer p.forget(r)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.server.Read(buf)
		if n > 0 {
			if r.drop.Load() {
				p.dropped.Add(1)
				return
			}
			if _, werr := r.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) Cut() int {
	p.mu.Lock()
	rs := make([]*relay, 0, len(p.conns))
	for r := range p.conns {
		rs = append(rs, r)
	}
	p.mu.Unlock()
	for _, r := range rs {
		r.close()
	}
	return len(rs)
}

func (p *proxy) SetLatency(max time.Duration) { p.latency.Store(int64(max)) }
func (p *proxy) DropReply()                   { p.drops.Add(1) }
func (p *proxy) Dropped() int64               { return p.dropped.Load() }

func (p *proxy) Stall(d time.Duration) {
	p.stallUntil.Store(time.Now().Add(d).UnixNano())
}

func (p *proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errors.New("soak: proxy closed twice")
	}
	p.closed = true
	p.mu.Unlock()
	close(p.done)
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}
