package soak

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redlock"
)

// Config configures a soak.
type Config struct {
	// Duration is how long the fleet runs. Default 40 s.
	Duration time.Duration
	// Seed seeds every random choice (offsets, leases, faults, holds).
	// Default 1.
	Seed int64
	// MaxSkew bounds each client's clock offset: drawn from
	// [-MaxSkew, +MaxSkew]. Default 5 s.
	MaxSkew time.Duration
	// Logf receives progress lines (t.Logf). Optional.
	Logf func(format string, args ...any)
}

func (c *Config) defaults() {
	if c.Duration <= 0 {
		c.Duration = 40 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.MaxSkew == 0 {
		c.MaxSkew = 5 * time.Second
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
}

// server is one redis-server of the soak.
type server struct {
	name       string
	srv        *redistest.Server
	persistent bool
	// repl, for F: the primary and its replica (srv is nil); proxies: the
	// workers' proxies in front of it, retargeted by a failover.
	repl    *redistest.Replicated
	proxies []*proxy
}

// addr is where the server's clients connect now.
func (s *server) addr() string {
	if s.repl != nil {
		return s.repl.Primary.Addr()
	}
	return s.srv.Addr()
}

// restart is one restart of a server, on the common clock.
type restart struct {
	srv        *server
	start, end time.Duration
}

// group is a set of lock names and the workers that contend for them.
type group struct {
	name    string
	keys    []string
	servers []*server // one, or the redlock nodes
	workers []*worker
}

// harness is one soak run.
type harness struct {
	cfg       Config
	t0        time.Time
	faults    faultCounts
	servers   []*server
	groups    []*group
	workers   []*worker
	proxies   []*proxy
	errSample errSample

	ev *evictor // E's eviction pressure and observer

	mu        sync.Mutex
	keys      map[string]*keyLog
	holds     []*hold
	restarts  []restart
	failovers []*failover
}

// now is the common monotonic clock: time since the start of the run.
func (h *harness) now() time.Duration { return time.Since(h.t0) }

// wallMs is the true wall-clock time, in Unix milliseconds, at common time d.
func (h *harness) wallMs(d time.Duration) int64 { return h.t0.Add(d).UnixMilli() }

func (h *harness) keyLog(key string) *keyLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.keys[key]
	if l == nil {
		l = &keyLog{}
		h.keys[key] = l
	}
	return l
}

func (h *harness) addHold(hd *hold) {
	h.mu.Lock()
	h.holds = append(h.holds, hd)
	h.mu.Unlock()
}

// errSample keeps a few worker errors of each kind for the log.
type errSample struct {
	mu   sync.Mutex
	seen map[string]int
}

func (h *harness) noteError(w *worker, op string, err error) {
	k := string(w.kind) + " " + op
	h.errSample.mu.Lock()
	defer h.errSample.mu.Unlock()
	if h.errSample.seen == nil {
		h.errSample.seen = map[string]int{}
	}
	h.errSample.seen[k]++
	if h.errSample.seen[k] <= 2 {
		h.cfg.Logf("sample error: %s %s: %v", w.name, op, err)
	}
}

// spec is one group of the fleet: its servers, keys and workers.
type spec struct {
	name    string
	servers []*server
	keys    int
	kinds   []Kind
	// offset, if set, is every worker's clock offset: the clients agree
	// with each other and differ from the server's clock by it.
	offset *time.Duration
}

func offset(d time.Duration) *time.Duration { return &d }

// Run runs the soak and returns its figures. tb starts (and stops) the
// redis-servers; Run must be called from the test goroutine (restarts fail
// the test with tb.Fatalf).
func Run(tb testing.TB, cfg Config) *Figures {
	tb.Helper()
	cfg.defaults()
	rnd := rand.New(rand.NewSource(cfg.Seed))
	h := &harness{cfg: cfg, keys: map[string]*keyLog{}}

	// P: the main server, persistent, restarted; R2, R3: the other redlock
	// nodes; V: a server without persistence, restarted (data loss); F: a
	// primary with a replica, failed over to it after the replica lagged;
	// E: a server under eviction pressure.
	p := &server{name: "P", srv: redistest.StartPersistent(tb), persistent: true}
	rs := redistest.StartN(tb, 4)
	r2 := &server{name: "R2", srv: rs[0]}
	r3 := &server{name: "R3", srv: rs[1]}
	v := &server{name: "V", srv: rs[2]}
	e := &server{name: "E", srv: rs[3]}
	fo := &server{name: "F", repl: redistest.StartReplicated(tb)}
	h.servers = []*server{p, r2, r3, v, fo, e}
	h.ev = newEvictor(h, e)
	setupCtx, setupDone := context.WithTimeout(context.Background(), 30*time.Second)
	ps, err := h.ev.start(setupCtx)
	setupDone()
	if err != nil {
		tb.Fatalf("soak: setting up eviction on E: %v", err)
	}

	specs := []spec{
		{"java-baseline", []*server{p}, 2, []Kind{Java, Java, Java, Java}, nil},
		{"legacy", []*server{p}, 2, []Kind{Java, Java, Atomic, Atomic, Classic, Classic}, nil},
		{"legacy+dual-write", []*server{p}, 2, []Kind{Java, MigLegacy, MigDualWrite, MigDualWrite}, nil},
		{"dual-write+dual-read", []*server{p}, 1, []Kind{MigDualWrite, MigDualWrite, MigDualRead, MigDualRead}, nil},
		{"dual-read+modern", []*server{p}, 1, []Kind{MigDualRead, MigDualRead, MigModern, MigModern}, nil},
		{"dual-write+modern", []*server{p}, 1, []Kind{MigDualWrite, MigDualWrite, MigModern, MigModern}, nil},
		// The same fleets with one clock among the clients, the server's
		// 5 s behind or ahead of it: no takeover is early there, so what
		// the Java scheme allows is only its literal DEL and GETSET, and a
		// Go lock that judged its lease by the server's clock would show.
		{"legacy@server-5s", []*server{p}, 1, []Kind{Java, Atomic, Atomic, Classic}, offset(5 * time.Second)},
		{"legacy@server+5s", []*server{p}, 1, []Kind{Java, Atomic, Atomic, Classic}, offset(-5 * time.Second)},
		{"legacy+dual-write@server-5s", []*server{p}, 1, []Kind{Java, MigLegacy, MigDualWrite, MigDualWrite},
			offset(5 * time.Second)},
		{"legacy+dual-write@server+5s", []*server{p}, 1, []Kind{Java, MigLegacy, MigDualWrite, MigDualWrite},
			offset(-5 * time.Second)},
		{"modern", []*server{p}, 2, []Kind{Modern, Modern, Modern}, nil},
		{"redlock", []*server{p, r2, r3}, 2, []Kind{Redlock, Redlock, Redlock}, nil},
		{"volatile-legacy", []*server{v}, 1, []Kind{Java, Atomic, Atomic}, nil},
		{"volatile-modern", []*server{v}, 1, []Kind{Modern, Modern}, nil},
		// Failover to a lagging replica: plain locks can be lost (class d);
		// fences must still increase.
		{"failover-modern", []*server{fo}, 2, []Kind{Modern, Modern, Modern}, nil},
		{"failover-legacy", []*server{fo}, 1, []Kind{Java, Atomic, Atomic}, nil},
		{"failover-dual-write+dual-read", []*server{fo}, 1, []Kind{MigDualWrite, MigDualWrite, MigDualRead, MigDualRead},
			nil},
		// Eviction pressure under volatile-* and allkeys-* policies: lock
		// keys can be evicted (class e).
		{"evict-modern", []*server{e}, 2, []Kind{Modern, Modern, Modern}, nil},
		{"evict-legacy", []*server{e}, 1, []Kind{Java, Atomic, Atomic}, nil},
		{"evict-dual-read+modern", []*server{e}, 1, []Kind{MigDualRead, MigDualRead, MigModern, MigModern}, nil},
	}
	goroutinesBefore := countGoroutines()
	h.t0 = time.Now()
	for _, s := range specs {
		g := &group{name: s.name, servers: s.servers}
		for i := 0; i < s.keys; i++ {
			g.keys = append(g.keys, fmt.Sprintf("soak:%s:%d", s.name, i))
		}
		for i, k := range s.kinds {
			w := h.newWorker(tb, g, fmt.Sprintf("%s/%s-%d", s.name, k, i), k, i, s.offset, rand.New(rand.NewSource(rnd.Int63())))
			g.workers = append(g.workers, w)
			h.workers = append(h.workers, w)
		}
		h.groups = append(h.groups, g)
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, w := range h.workers {
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			w.run(ctx)
		}(w)
	}
	chaosRnd := rand.New(rand.NewSource(rnd.Int63()))
	evRnd := rand.New(rand.NewSource(rnd.Int63()))
	foRnd := rand.New(rand.NewSource(rnd.Int63()))
	wg.Add(2)
	go func() {
		defer wg.Done()
		h.chaos(ctx, chaosRnd)
	}()
	go func() {
		defer wg.Done()
		h.ev.run(ctx, ps, evRnd)
	}()

	// Restarts and failovers run here, on the test goroutine: P
	// (persistent) and V (no persistence) in turn, F's failovers between
	// them, spread over the run.
	h.restartLoop(tb, []*server{p, v}, fo, foRnd)
	stop()
	wg.Wait()
	runEnd := h.now()

	// Close everything, then count the goroutines left.
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	for _, w := range h.workers {
		if w.closer != nil {
			if err := w.closer(closeCtx); err != nil {
				tb.Errorf("soak: closing %s: %v", w.name, err)
			}
		}
		for _, c := range w.rdbs {
			_ = c.Close()
		}
	}
	cancel()
	var dropped int64
	for _, pr := range h.proxies {
		dropped += pr.Dropped()
		pr.Close()
	}
	h.faults.add("drop", dropped)
	leaked := settleGoroutines(goroutinesBefore)

	f := h.analyse()
	f.Duration = runEnd
	f.Seed = cfg.Seed
	f.GoroutinesBefore = goroutinesBefore
	f.GoroutinesAfter = leaked.after
	f.LeakedStacks = leaked.stacks
	return f
}

// newWorker builds a worker of kind k in g: its proxies (one per server),
// clients and locker.
func (h *harness) newWorker(tb testing.TB, g *group, name string, k Kind, i int, offset *time.Duration,
	rnd *rand.Rand) *worker {
	tb.Helper()
	w := &worker{h: h, name: name, kind: k, group: g, rnd: rnd}
	if k.skewed() {
		w.offset = time.Duration(rnd.Int63n(int64(2*h.cfg.MaxSkew)+1)) - h.cfg.MaxSkew
		w.offset = w.offset.Truncate(time.Millisecond)
		if offset != nil {
			w.offset = *offset
		}
		h.faults.add("skewed-client", 1)
	}
	// Every group mixes long and short leases: a successor whose lease is
	// under half the holder's writes a value inside the holder's owner
	// window.
	leases := []time.Duration{1600 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	w.lease = leases[i%len(leases)]
	switch k {
	case Modern:
		w.lease, w.auto = 600*time.Millisecond, true
	case Redlock:
		w.lease = 1600 * time.Millisecond
	}
	var clients []driver.Client
	for _, s := range g.servers {
		p := newProxy(tb, s.addr(), rand.New(rand.NewSource(rnd.Int63())))
		h.proxies = append(h.proxies, p)
		if s.repl != nil {
			s.proxies = append(s.proxies, p)
		}
		w.proxies = append(w.proxies, p)
		rdb := newClient(p)
		w.rdbs = append(w.rdbs, rdb)
		rec := &recorder{Client: goredis.New(rdb), w: w}
		w.recs = append(w.recs, rec)
		clients = append(clients, rec)
	}
	fast := lockbridge.LinearBackoff(5*time.Millisecond, 20*time.Millisecond)
	clock := legacy.WithClock(w.clock)
	mig := func(ph migrate.Phase) lockbridge.Locker {
		m := migrate.New(clients[0], migrate.WithPhase(ph), migrate.WithBackoff(fast), migrate.WithLegacy(clock))
		w.closer = m.Close
		return m
	}
	switch k {
	case Java:
	case Atomic:
		w.locker = legacy.New(clients[0], clock, legacy.WithBackoff(fast))
	case Classic:
		w.locker = legacy.New(clients[0], clock, legacy.WithClassic(), legacy.WithBackoff(fast))
	case MigLegacy:
		w.locker = mig(migrate.PhaseLegacy)
	case MigDualWrite:
		w.locker = mig(migrate.PhaseDualWrite)
	case MigDualRead:
		w.locker = mig(migrate.PhaseDualRead)
	case MigModern:
		w.locker = mig(migrate.PhaseModern)
	case Modern:
		w.locker = modern.New(clients[0], modern.WithAutoRefresh(), modern.WithFencing(), modern.WithBackoff(fast))
	case Redlock:
		w.locker = redlock.New(clients, redlock.WithNodeTimeout(350*time.Millisecond), redlock.WithBackoff(fast))
	default:
		tb.Fatalf("soak: unknown kind %q", k)
	}
	return w
}

// restartLoop restarts the servers in turn, evenly over the run, fails f
// over between them, and returns when the run's duration is over.
func (h *harness) restartLoop(tb testing.TB, srvs []*server, f *server, rnd *rand.Rand) {
	tb.Helper()
	d := h.cfg.Duration
	// One restart of each server and one failover per 20 s, at least one
	// each.
	n := int(d / (20 * time.Second))
	if n < 1 {
		n = 1
	}
	type event struct {
		at  time.Duration
		srv *server // nil: a failover of f
	}
	var evs []event
	for i := 0; i < n*len(srvs); i++ {
		evs = append(evs, event{d * time.Duration(2*i+1) / time.Duration(2*n*len(srvs)), srvs[i%len(srvs)]})
	}
	for j := 0; j < n; j++ {
		evs = append(evs, event{d * time.Duration(2*j+1) / time.Duration(2*n), nil})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	for _, ev := range evs {
		if w := ev.at - h.now(); w > 0 {
			time.Sleep(w)
		}
		if ev.srv == nil {
			h.failover(tb, f, failoverLag(rnd))
			continue
		}
		s := ev.srv
		start := h.now()
		s.srv.Restart()
		end := h.now()
		h.mu.Lock()
		h.restarts = append(h.restarts, restart{srv: s, start: start, end: end})
		h.mu.Unlock()
		if s.persistent {
			h.faults.add("restart-persistent", 1)
		} else {
			h.faults.add("restart-volatile", 1)
		}
		h.cfg.Logf("%6.1fs restarted %s (persistent %v) in %v", start.Seconds(), s.name, s.persistent,
			(end - start).Round(time.Millisecond))
	}
	if w := d - h.now(); w > 0 {
		time.Sleep(w)
	}
}

// chaos injects the network faults until ctx ends: cuts, dropped replies,
// latency episodes (each frame delayed by a fresh draw from [0, 300 ms)
// every 100 ms), each on one worker's proxy at a time.
func (h *harness) chaos(ctx context.Context, rnd *rand.Rand) {
	slow := map[*proxy]time.Duration{} // proxy → end of its episode
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for p := range slow {
				p.SetLatency(0)
			}
			return
		case <-tick.C:
		}
		now := h.now()
		for _, p := range h.proxies {
			p.endStall()
		}
		for p, end := range slow {
			if now >= end {
				p.SetLatency(0)
				delete(slow, p)
			} else {
				p.SetLatency(time.Duration(rnd.Int63n(int64(300 * time.Millisecond))))
			}
		}
		pick := func() *proxy { return h.proxies[rnd.Intn(len(h.proxies))] }
		if rnd.Float64() < 0.3 {
			pick().Cut()
			h.faults.add("cut", 1)
		}
		if rnd.Float64() < 0.6 {
			pick().DropReply()
		}
		if rnd.Float64() < 0.4 {
			p := pick()
			if _, ok := slow[p]; !ok {
				slow[p] = now + time.Duration(500+rnd.Intn(2500))*time.Millisecond
				h.faults.add("latency-episode", 1)
			}
		}
	}
}

// faultCounts counts the faults injected, by kind.
type faultCounts struct {
	mu sync.Mutex
	m  map[string]int64
}

func (f *faultCounts) add(kind string, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]int64{}
	}
	f.m[kind] += n
}

func (f *faultCounts) snapshot() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int64{}
	for k, v := range f.m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
