package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/bench/internal/redisserver"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// Config is one fleet to measure.
type Config struct {
	Lockers int  // migrate.Lockers, each its own member of the registry
	Cluster bool // a 3-primary cluster instead of one server
	// PerProcess is how many lockers share one go-redis client (a
	// simulated process); default 100.
	PerProcess int
	// Window is how long the steady state is measured; default 20 s (two
	// of a protocol-3 follower's reading periods).
	Window time.Duration
	// Root is the repository's root (for the script names of
	// testdata/vectors/scripts.json); default "..".
	Root string
	// Log, when set, is told what the run is doing.
	Log func(format string, a ...any)
}

// Result is what one run measured. Server CPU is the namespace's primary's
// (used_cpu_sys + used_cpu_user of INFO cpu over the window: every
// thread, syscalls included); command times are the server's (SLOWLOG).
type Result struct {
	Lockers int
	Cluster bool
	// RoundTrips is the fleet's commands per second in the steady state,
	// counted as sent (one round trip each).
	RoundTrips float64
	// Sent is the fleet's commands by name (script file for an EVALSHA),
	// per second.
	Sent map[string]float64
	// CPU is the primary's CPU over the window as a share of one core;
	// CPUOthers the other primaries' (cluster).
	CPU       float64
	CPUOthers []float64
	// Idle is the primary's CPU share before the fleet started; Upkeep the
	// share with as many idle connections as the fleet held (a
	// subscription per locker, the clients' pools) and no command:
	// holding the fleet's connections.
	Idle, Upkeep float64
	// Heartbeats is CPU minus Upkeep: what the fleet's commands cost.
	Heartbeats float64
	// PerRoundTrip is Heartbeats per round trip of the fleet.
	PerRoundTrip time.Duration
	// Floor is the primary's CPU per round trip, above Upkeep, when the
	// same clients send a PING at the same rate instead, with the same
	// connections open (the round trip alone).
	Floor    time.Duration
	FloorCPU float64
	// Commands are the server times of the fleet's commands in the steady
	// state, by name.
	Commands map[string]Times
	// Status is Controller.Status as the caller saw it (median of 5) and
	// the longest server time of a command it sent.
	Status, StatusServer time.Duration
	// Advance is Controller.Advance (legacy to dual-write), and the longest
	// server time of a command it sent.
	Advance, AdvanceServer time.Duration
	// AfterStep are the server times of the fleet's commands in the
	// seconds after the step (every locker reads at once on the notice).
	AfterStep map[string]Times
	// Memory is MEMORY USAGE of the namespace's keys, summed.
	Memory int64
	// Seen99 and SeenAll are how long after Advance was called 99 % and
	// all of the lockers ran the new phase.
	Seen99, SeenAll time.Duration
	// Missed counts the lockers that had not run it by Advance's time + a
	// reading period + 2 intervals (counted there in Seen99 and SeenAll);
	// NoticeErrors the warnings the controller logged (a notice not sent).
	Missed       int
	NoticeErrors int64
}

// Times are server times of one command.
type Times struct {
	N             int
	P50, P99, Max time.Duration
}

// counter counts the commands a client sends, by name.
type counter struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		name := cmd.Name()
		if name == "evalsha" || name == "evalsha_ro" || name == "eval" || name == "eval_ro" {
			if a := cmd.Args(); len(a) > 1 {
				name = name + " " + fmt.Sprint(a[1])
			}
		}
		c.mu.Lock()
		c.n[name]++
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.mu.Lock()
		c.n["pipeline"]++
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (c *counter) take() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	c.n = map[string]int64{}
	return out
}

// run is one fleet on its servers.
type run struct {
	cfg      Config
	ns       string
	primary  *node
	others   []*node
	newRedis func() redis.UniversalClient
	count    *counter
	shas     map[string]string
	clients  []redis.UniversalClient
	warns    atomic.Int64
	lockers  []*migrate.Locker
	ctl      *control.Controller
}

func (r *run) logf(format string, a ...any) {
	if r.cfg.Log != nil {
		r.cfg.Log(format, a...)
	}
}

// Run starts the servers, the fleet and the controller, measures, and stops
// them all.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	if cfg.PerProcess <= 0 {
		cfg.PerProcess = 100
	}
	if cfg.Window <= 0 {
		cfg.Window = 20 * time.Second
	}
	if cfg.Root == "" {
		cfg.Root = ".."
	}
	r := &run{cfg: cfg, ns: "fleet", count: &counter{n: map[string]int64{}}}
	if r.shas, err = scripts(cfg.Root); err != nil {
		return res, err
	}
	stop, err := r.servers()
	if err != nil {
		return res, err
	}
	defer stop()
	defer r.closeAll()
	res = Result{Lockers: cfg.Lockers, Cluster: cfg.Cluster}
	r.logf("idle, %v", cfg.Window/2)
	idle, _, err := r.window(cfg.Window / 2)
	if err != nil {
		return res, err
	}
	res.Idle = idle[0].Seconds() / (cfg.Window / 2).Seconds()
	if err := r.start(ctx); err != nil {
		return res, err
	}
	if err := r.steady(ctx, &res); err != nil {
		return res, err
	}
	if err := r.control(ctx, &res); err != nil {
		return res, err
	}
	r.closeLockers(ctx)
	if err := r.floor(ctx, &res); err != nil {
		return res, err
	}
	return res, nil
}

// servers starts one server or a cluster and finds the namespace's primary.
func (r *run) servers() (func(), error) {
	var addrs []string
	var stop func()
	if r.cfg.Cluster {
		c, s, err := redistest.StandaloneCluster(3)
		if err != nil {
			return nil, err
		}
		addrs, stop = c.Addrs(), s
	} else {
		s, err := redisserver.Start()
		if err != nil {
			return nil, err
		}
		addrs, stop = []string{s.Addr()}, s.Close
	}
	// The namespace's slot: 0-5460, 5461-10922, 10923-16383 (redistest).
	at := 0
	if r.cfg.Cluster {
		at = keyslot.Of("{"+r.ns+"}") * len(addrs) / 16384
	}
	for i, a := range addrs {
		n, err := dialNode(a)
		if err != nil {
			stop()
			return nil, err
		}
		// Room for every locker's subscription connection and the pools.
		if _, err := n.do("CONFIG", "SET", "maxclients", "19000"); err != nil {
			stop()
			return nil, fmt.Errorf("fleet: CONFIG SET maxclients: %w", err)
		}
		if i == at {
			r.primary = n
		} else {
			r.others = append(r.others, n)
		}
	}
	hook := r.count
	// A pool kept full: one that grows and shrinks with bursts opens new
	// connections, each a HELLO on the server — an artifact of many
	// lockers sharing a client (a process of one locker has no bursts).
	const pool = 20
	if r.cfg.Cluster {
		r.newRedis = func() redis.UniversalClient {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, MaxRedirects: -1, PoolSize: pool,
				MinIdleConns: pool})
			c.AddHook(hook)
			return c
		}
	} else {
		r.newRedis = func() redis.UniversalClient {
			c := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, PoolSize: pool, MinIdleConns: pool})
			c.AddHook(hook)
			return c
		}
	}
	return func() {
		r.primary.close()
		for _, n := range r.others {
			n.close()
		}
		stop()
	}, nil
}

// client returns the driver.Client of locker i's simulated process.
func (r *run) client(i int) driver.Client {
	p := i / r.cfg.PerProcess
	for len(r.clients) <= p {
		r.clients = append(r.clients, r.newRedis())
	}
	return goredis.New(r.clients[p])
}

// period is how often a follower that hears the notices reads with the
// default options: two intervals before its default phase lease lapses
// (one interval for a lease of 3, protocol 2's).
var period = max(migrate.DefaultPhaseInterval, (migrate.DefaultPhaseLeaseIntervals-2)*migrate.DefaultPhaseInterval)

// start initialises the namespace and starts the lockers, spread evenly
// over one reading period as a fleet deployed over time is, then lets them
// settle for another interval.
func (r *run) start(ctx context.Context) error {
	ctl, err := control.New(r.client(0), r.ns, control.WithQuietPeriod(time.Second),
		control.WithTelemetry(lockbridge.Telemetry{Logger: slog.New(warnCounter{&r.warns})}))
	if err != nil {
		return err
	}
	r.ctl = ctl
	if _, err := ctl.Init(ctx, true); err != nil {
		return fmt.Errorf("fleet: init: %w", err)
	}
	n := r.cfg.Lockers
	r.lockers = make([]*migrate.Locker, n)
	for i := range r.lockers {
		r.lockers[i] = migrate.New(r.client(i), migrate.WithPhaseFrom(r.ns))
	}
	r.logf("%d lockers: starting over %v", n, period)
	t0 := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []*migrate.Locker
	for i, l := range r.lockers {
		time.Sleep(time.Until(t0.Add(period * time.Duration(i) / time.Duration(n))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Phase(ctx); err != nil {
				mu.Lock()
				failed = append(failed, l)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// A locker whose first reading failed (a loaded machine) tries again,
	// as a real one does at its next lock call.
	for try := 0; try < 5 && len(failed) > 0; try++ {
		r.logf("%d lockers: %d first readings failed, again", n, len(failed))
		again := failed
		failed = nil
		for _, l := range again {
			if _, err := l.Phase(ctx); err != nil {
				failed = append(failed, l)
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("fleet: %d of %d lockers could not read their phase", len(failed), n)
	}
	time.Sleep(migrate.DefaultPhaseInterval)
	return nil
}

// steady measures the heartbeats: CPU and round trips over the window
// (SLOWLOG off), then the server time of each command over a few
// intervals with every command logged, and the namespace's memory.
func (r *run) steady(ctx context.Context, res *Result) error {
	for _, n := range append([]*node{r.primary}, r.others...) {
		if err := n.slowlog(false); err != nil {
			return err
		}
	}
	r.logf("%d lockers: steady state, %v", r.cfg.Lockers, r.cfg.Window)
	cpu, sent, err := r.window(r.cfg.Window)
	if err != nil {
		return err
	}
	res.CPU = cpu[0].Seconds() / r.cfg.Window.Seconds()
	for _, c := range cpu[1:] {
		res.CPUOthers = append(res.CPUOthers, c.Seconds()/r.cfg.Window.Seconds())
	}
	res.Sent = map[string]float64{}
	var total int64
	for k, v := range sent {
		res.Sent[r.label(k)] += float64(v) / r.cfg.Window.Seconds()
		total += v
	}
	res.RoundTrips = float64(total) / r.cfg.Window.Seconds()
	if res.Commands, err = r.logged(func() error { time.Sleep(2 * migrate.DefaultPhaseInterval); return nil },
		nil); err != nil {
		return err
	}
	keys, _ := control.NamespaceKeys(r.ns)
	res.Memory, err = r.primary.memory(keys)
	return err
}

// label names a counted command: its script for an EVALSHA.
func (r *run) label(k string) string {
	if name, sha, ok := strings.Cut(k, " "); ok {
		if s, ok := r.shas[sha]; ok {
			return s
		}
		return name
	}
	return strings.ToUpper(k)
}

// window measures every primary's CPU and the fleet's commands over d.
func (r *run) window(d time.Duration) ([]time.Duration, map[string]int64, error) {
	nodes := append([]*node{r.primary}, r.others...)
	before := make([]time.Duration, len(nodes))
	for i, n := range nodes {
		c, err := n.cpu()
		if err != nil {
			return nil, nil, err
		}
		before[i] = c
	}
	r.count.take()
	time.Sleep(d)
	sent := r.count.take()
	out := make([]time.Duration, len(nodes))
	for i, n := range nodes {
		c, err := n.cpu()
		if err != nil {
			return nil, nil, err
		}
		out[i] = c - before[i]
	}
	return out, sent, nil
}

// logged runs f with every command on the primary logged, and returns the
// server times by command; with keep, only of the commands it names.
func (r *run) logged(f func() error, keep func(name string) bool) (map[string]Times, error) {
	if err := r.primary.slowlog(true); err != nil {
		return nil, err
	}
	ferr := f()
	entries, err := r.primary.slowEntries()
	if err2 := r.primary.slowlog(false); err == nil {
		err = err2
	}
	if ferr != nil {
		return nil, ferr
	}
	if err != nil {
		return nil, err
	}
	by := map[string][]time.Duration{}
	for _, e := range entries {
		name := e.name(r.shas)
		switch name {
		case "CONFIG", "config", "SLOWLOG", "slowlog", "INFO", "info":
			continue
		}
		if keep == nil || keep(name) {
			by[name] = append(by[name], e.d)
		}
	}
	out := map[string]Times{}
	for k, ds := range by {
		out[k] = Times{N: len(ds), P50: quantile(ds, .5), P99: quantile(ds, .99), Max: quantile(ds, 1)}
	}
	return out, nil
}

// control times Status and Advance, and how long the step takes to reach
// the fleet.
func (r *run) control(ctx context.Context, res *Result) error {
	ctlScripts := func(name string) bool {
		switch name {
		case "status.lua", "registry_read.lua", "prune.lua", "phase_set.lua", "PUBLISH", "SPUBLISH", "publish", "spublish":
			return true
		}
		return false
	}
	var lat []time.Duration
	st, err := r.logged(func() error {
		for range 5 {
			t := time.Now()
			s, err := r.ctl.Status(ctx)
			if err != nil {
				return err
			}
			lat = append(lat, time.Since(t))
			if !s.Safe() {
				return fmt.Errorf("fleet: the step is not safe: %v", s.Blockers)
			}
		}
		return nil
	}, ctlScripts)
	if err != nil {
		return err
	}
	res.Status, res.StatusServer = quantile(lat, .5), maxOf(st)
	var done time.Time
	var seen []time.Duration
	after, err := r.logged(func() error {
		t := time.Now()
		if _, err := r.ctl.Advance(ctx, false); err != nil {
			return err
		}
		done = time.Now()
		res.Advance = done.Sub(t)
		// From Advance's call: the notices go out while it runs.
		// A locker that missed its notice reads within its period.
		seen = r.watch(ctx, migrate.PhaseDualWrite, t, res.Advance+period+2*migrate.DefaultPhaseInterval)
		return nil
	}, nil)
	if err != nil {
		return err
	}
	res.NoticeErrors = r.warns.Load()
	res.AfterStep = map[string]Times{}
	for k, v := range after {
		if ctlScripts(k) {
			res.AdvanceServer = max(res.AdvanceServer, v.Max)
		} else {
			res.AfterStep[k] = v
		}
	}
	res.Missed = len(r.lockers) - len(seen)
	for len(seen) < len(r.lockers) { // not seen within the limit: counted at it
		seen = append(seen, res.Advance+period+2*migrate.DefaultPhaseInterval)
	}
	res.Seen99, res.SeenAll = quantile(seen, .99), quantile(seen, 1)
	return nil
}

// watch polls every locker's phase until each runs p or limit has passed,
// and returns when each did, after from.
func (r *run) watch(ctx context.Context, p migrate.Phase, from time.Time, limit time.Duration) []time.Duration {
	left := append([]*migrate.Locker(nil), r.lockers...)
	var seen []time.Duration
	for len(left) > 0 && time.Since(from) < limit {
		next := left[:0]
		for _, l := range left {
			if cur, err := l.Phase(ctx); err == nil && cur == p {
				seen = append(seen, time.Since(from))
			} else {
				next = append(next, l)
			}
		}
		left = next
		time.Sleep(5 * time.Millisecond)
	}
	return seen
}

func maxOf(m map[string]Times) time.Duration {
	var d time.Duration
	for _, t := range m {
		d = max(d, t.Max)
	}
	return d
}

// closeLockers closes every locker (their entries leave the registry).
func (r *run) closeLockers(ctx context.Context) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for _, l := range r.lockers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			_ = l.Close(ctx)
			<-sem
		}()
	}
	wg.Wait()
	r.lockers = nil
}

func (r *run) closeAll() {
	r.closeLockers(context.Background())
	for _, c := range r.clients {
		_ = c.Close()
	}
}

// floor holds as many idle connections as the fleet did (a subscription
// per locker beside the clients' pools) and measures the primary's CPU
// with no command (Upkeep); then the same clients send PINGs at the
// fleet's rate, spread as its heartbeats were (Floor).
func (r *run) floor(ctx context.Context, res *Result) error {
	n := r.cfg.Lockers
	var subs []*redis.PubSub
	defer func() {
		for _, s := range subs {
			_ = s.Close()
		}
	}()
	ch := "{" + r.ns + "}:idle"
	for i := range n {
		c := r.clients[i/r.cfg.PerProcess]
		var ps *redis.PubSub
		if cc, ok := c.(*redis.ClusterClient); ok {
			ps = cc.SSubscribe(ctx, ch)
		} else {
			ps = c.Subscribe(ctx, ch)
		}
		if _, err := ps.Receive(ctx); err != nil {
			return fmt.Errorf("fleet: idle subscription: %w", err)
		}
		subs = append(subs, ps)
	}
	time.Sleep(time.Second)
	r.logf("%d lockers: %d idle subscriptions, %v", n, n, r.cfg.Window/2)
	up, _, err := r.window(r.cfg.Window / 2)
	if err != nil {
		return err
	}
	res.Upkeep = up[0].Seconds() / (r.cfg.Window / 2).Seconds()
	res.Heartbeats = max(res.CPU-res.Upkeep, 0)
	if res.RoundTrips > 0 {
		res.PerRoundTrip = time.Duration(res.Heartbeats * float64(time.Second) / res.RoundTrips)
	}
	every := period
	if res.RoundTrips > 0 {
		every = time.Duration(float64(n) / res.RoundTrips * float64(time.Second))
	}
	fctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var pings atomic.Int64
	t0 := time.Now()
	for i := range n {
		c := r.clients[i/r.cfg.PerProcess]
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(t0.Add(every * time.Duration(i) / time.Duration(n))))
			tk := time.NewTicker(every)
			defer tk.Stop()
			for {
				if pingPrimary(fctx, c, r.cfg.Cluster, r.ns) == nil {
					pings.Add(1)
				}
				select {
				case <-fctx.Done():
					return
				case <-tk.C:
				}
			}
		}()
	}
	time.Sleep(every + time.Second)
	r.logf("%d lockers: floor (PING every %v), %v", n, every, r.cfg.Window)
	p0 := pings.Load()
	cpu, _, err := r.window(r.cfg.Window)
	total := pings.Load() - p0
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	res.FloorCPU = cpu[0].Seconds() / r.cfg.Window.Seconds()
	if total > 0 {
		res.Floor = time.Duration((res.FloorCPU - res.Upkeep) * float64(time.Second) * r.cfg.Window.Seconds() / float64(
			total))
	}
	return nil
}

// pingPrimary sends one PING to the namespace's primary.
func pingPrimary(ctx context.Context, c redis.UniversalClient, cluster bool, ns string) error {
	if !cluster {
		return c.Ping(ctx).Err()
	}
	m, err := c.(*redis.ClusterClient).MasterForKey(ctx, "{"+ns+"}")
	if err != nil {
		return err
	}
	return m.Ping(ctx).Err()
}

// Names lists the commands of m, most sent first.
func Names(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return m[out[i]] > m[out[j]] })
	return out
}

// warnCounter counts the controller's warnings of failed notices.
type warnCounter struct{ n *atomic.Int64 }

func (w warnCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w warnCounter) Handle(_ context.Context, rec slog.Record) error {
	if strings.Contains(rec.Message, "notice") {
		w.n.Add(1)
	}
	return nil
}
func (w warnCounter) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w warnCounter) WithGroup(string) slog.Handler      { return w }
