package soak

import (
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
)

// Faults is what the soak needs of a fault-injecting loopback proxy in
// front of one redis-server. Each worker's client dials its own proxy, so a
// fault hits one worker (one client process) at a time.
type Faults interface {
	// Addr is the address clients dial.
	Addr() string
	// Cut closes every connection open through the proxy.
	Cut()
	// SetLatency delays every frame by d from now on (0: none).
	SetLatency(d time.Duration)
	// DropReply forwards the next command to the server and drops its
	// reply, then closes the connection or leaves it hanging: the command
	// ran, its outcome never reaches the client.
	DropReply()
	// Stall delays every frame by d for the next d: the process, its
	// refresher included, is cut off for longer than a lease.
	Stall(d time.Duration)
	// Dropped is how many replies were dropped so far.
	Dropped() int64
	// Close stops the proxy.
	Close()
}

// proxy adapts internal/testing/faultproxy.
type proxy struct {
	p   *faultproxy.Proxy
	rnd *rand.Rand

	mu         sync.Mutex
	latency    time.Duration
	stallUntil time.Time
}

func newProxy(tb testing.TB, upstream string, rnd *rand.Rand) *proxy {
	return &proxy{p: faultproxy.Start(tb, upstream), rnd: rnd}
}

func (p *proxy) Addr() string      { return p.p.Addr() }
func (p *proxy) Retarget(a string) { p.p.Retarget(a) }
func (p *proxy) Cut()              { p.p.Cut() }
func (p *proxy) Dropped() int64    { return int64(p.p.Dropped()) }
func (p *proxy) Close()            { p.p.Close() }

func (p *proxy) DropReply() {
	p.mu.Lock()
	then := faultproxy.Close
	if p.rnd.Intn(2) == 0 {
		then = faultproxy.Hang
	}
	p.mu.Unlock()
	p.p.DropReply(faultproxy.Any, 1, then)
}

func (p *proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
	if time.Now().Before(p.stallUntil) {
		return // the stall's delay stays until it ends
	}
	p.p.Delay(d)
}

func (p *proxy) Stall(d time.Duration) {
	p.mu.Lock()
	p.stallUntil = time.Now().Add(d)
	p.mu.Unlock()
	p.p.Delay(d)
}

// endStall restores the latency once a stall is over; the chaos loop
// calls it on every tick.
func (p *proxy) endStall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stallUntil.IsZero() && !time.Now().Before(p.stallUntil) {
		p.stallUntil = time.Time{}
		p.p.Delay(p.latency)
	}
}
