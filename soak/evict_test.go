package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/migrate"
	goredislib "github.com/redis/go-redis/v9"
)

// Eviction pressure. E runs with maxmemory a few MB above what it uses at
// the start, and a filler keeps writing 4 KB values with a 60 s TTL (every
// policy can evict them) so that memory stays at the limit: every write
// evicts. The policy changes every evictPeriod, through volatile-* (keys
// with a TTL: modern locks, the modern half of migrate locks) and
// allkeys-* (every lock, legacy values and fence counters included).
//
// The evidence. E publishes keyspace notifications (notify-keyspace-events
// K$gxe) and an observer, subscribed past the proxies, receives those of
// the lock keys — set, del, expired, evicted — in the server's order. A
// marker goroutine PUBLISHes a sequence number every 5 ms and notes when
// it sent each and when the reply came; the observer receives the markers
// in the same stream, so each event executed after the marker before it
// was sent and before the reply of the marker after it came: an interval
// on the common clock. An overlap of x and y is "evicted" only when, on a
// key both wrote, an eviction came right after a set that x's acquire can
// have made (its interval meets x's acquire call, nothing deleted or
// expired the key in between), and a set after the eviction can be y's
// (its interval meets y's acquire call): x's lock was gone from the
// eviction on, whoever came next.

const (
	evictPeriod    = 10 * time.Second
	evictHeadroom  = 3 << 20 // bytes above the starting used_memory
	fillValue      = 4 << 10
	fillEvery      = 10 * time.Millisecond
	markerEvery    = 5 * time.Millisecond
	keyspacePrefix = "__keyspace@0__:"
	markerChannel  = "soak:marker"
)

// evictPolicies is the order the periods go through.
var evictPolicies = []string{"volatile-lru", "allkeys-lru", "volatile-ttl", "allkeys-random", "volatile-random",
	"allkeys-lfu", "volatile-lfu"}

// ksEvent is one keyspace notification of a lock key.
type ksEvent struct {
	event string
	// prev, next: the markers received just before and after it (-1:
	// none); floor: when the subscription it came on was (re)established.
	prev, next int
	floor      time.Duration
}

type marker struct{ sent, replied time.Duration }

type policyPeriod struct {
	policy string
	start  time.Duration
}

// evictor runs E's pressure and observes its lock keys.
type evictor struct {
	h   *harness
	s   *server
	cfg *goredislib.Client // config, filler, markers: past the proxies
	sub *goredislib.Client // the observer's subscription

	mu         sync.Mutex
	markers    map[int]marker
	events     map[string][]ksEvent // server key → its events, in the server's order
	pending    []pendingRef         // events waiting for the next marker
	periods    []policyPeriod
	lockEvicts int64
	errs       map[string]int64
	steps      map[string]int64 // the controller's steps: "family: outcome" → count
}

type pendingRef struct {
	key string
	i   int
}

func newEvictor(h *harness, s *server) *evictor {
	return &evictor{h: h, s: s, markers: map[int]marker{}, events: map[string][]ksEvent{}, errs: map[string]int64{},
		steps: map[string]int64{}}
}

func (ev *evictor) noteErr(what string, err error) {
	ev.mu.Lock()
	ev.errs[what]++
	n := ev.errs[what]
	ev.mu.Unlock()
	if n <= 2 {
		ev.h.cfg.Logf("eviction: %s: %v", what, err)
	}
}

// start configures E and starts the observer; run does the rest until ctx
// ends.
func (ev *evictor) start(ctx context.Context) (*goredislib.PubSub, error) {
	addr := ev.s.srv.Addr()
	ev.cfg = goredislib.NewClient(&goredislib.Options{Addr: addr, MaxRetries: -1, PoolSize: 4})
	if err := ev.cfg.ConfigSet(ctx, "notify-keyspace-events", "K$gxe").Err(); err != nil {
		return nil, err
	}
	info, err := ev.cfg.Info(ctx, "memory").Result()
	if err != nil {
		return nil, err
	}
	used := infoInt(info, "used_memory")
	if err := ev.cfg.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+evictHeadroom, 10)).Err(); err != nil {
		return nil, err
	}
	if err := ev.setPolicy(ctx, evictPolicies[0]); err != nil {
		return nil, err
	}
	sub := goredislib.NewClient(&goredislib.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	ev.sub = sub
	ps := sub.PSubscribe(ctx, keyspacePrefix+"*soak:evict*")
	if err := ps.Subscribe(ctx, markerChannel); err != nil {
		_ = ps.Close()
		_ = sub.Close()
		return nil, err
	}
	// Fill up to the limit before the fleet starts.
	val := strings.Repeat("x", fillValue)
	for i := 0; i < (evictHeadroom/fillValue)+50; i++ {
		if err := ev.cfg.Set(ctx, "fill:pre:"+strconv.Itoa(i), val, time.Minute).Err(); err != nil {
			_ = ps.Close()
			_ = sub.Close()
			return nil, err
		}
	}
	return ps, nil
}

func infoInt(info, field string) int64 {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func (ev *evictor) setPolicy(ctx context.Context, p string) error {
	if err := ev.cfg.ConfigSet(ctx, "maxmemory-policy", p).Err(); err != nil {
		return err
	}
	at := time.Duration(0) // the first, set before the run's clock starts
	if !ev.h.t0.IsZero() {
		at = ev.h.now()
	}
	ev.mu.Lock()
	ev.periods = append(ev.periods, policyPeriod{policy: p, start: at})
	ev.mu.Unlock()
	ev.h.faults.add("eviction-period "+p, 1)
	return nil
}

// run runs the filler, the markers, the observer and the policy changes
// until ctx ends, then closes ps and its own clients.
func (ev *evictor) run(ctx context.Context, ps *goredislib.PubSub, rnd *rand.Rand) {
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); ev.control(ctx) }()
	go func() { defer wg.Done(); ev.observe(ctx, ps) }()
	go func() { defer wg.Done(); ev.markLoop(ctx) }()
	go func() { defer wg.Done(); ev.fill(ctx, rnd) }()
	tick := time.NewTicker(evictPeriod)
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
		case <-tick.C:
			if err := ev.setPolicy(ctx, evictPolicies[i%len(evictPolicies)]); err != nil && ctx.Err() == nil {
				ev.noteErr("policy", err)
			}
			continue
		}
		break
	}
	tick.Stop()
	_ = ps.Close() // ends observe's Receive
	wg.Wait()
	if info, err := ev.cfg.Info(context.Background(), "stats").Result(); err == nil {
		ev.h.faults.add("evicted keys (all)", infoInt(info, "evicted_keys"))
	}
	ev.mu.Lock()
	ev.h.faults.add("evicted lock keys (seen)", ev.lockEvicts)
	ev.mu.Unlock()
	_ = ev.sub.Close()
	_ = ev.cfg.Close()
}

func (ev *evictor) fill(ctx context.Context, rnd *rand.Rand) {
	val := strings.Repeat("y", fillValue)
	tick := time.NewTicker(fillEvery)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ttl := time.Duration(30+rnd.Intn(60)) * time.Second
		if err := ev.cfg.Set(ctx, "fill:"+strconv.Itoa(n), val, ttl).Err(); err != nil && ctx.Err() == nil {
			ev.noteErr("fill", err)
		}
	}
}

func (ev *evictor) markLoop(ctx context.Context) {
	tick := time.NewTicker(markerEvery)
	defer tick.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sent := ev.h.now()
		err := ev.cfg.Publish(ctx, markerChannel, strconv.Itoa(seq)).Err()
		replied := ev.h.now()
		if err != nil {
			if ctx.Err() == nil {
				ev.noteErr("marker", err)
			}
			continue
		}
		ev.mu.Lock()
		ev.markers[seq] = marker{sent: sent, replied: replied}
		ev.mu.Unlock()
	}
}

func (ev *evictor) observe(ctx context.Context, ps *goredislib.PubSub) {
	floor, prev := ev.h.now(), -1
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil || err == goredislib.ErrClosed {
				return
			}
			// The subscription is re-established: what comes next ran
			// after now; what ran meanwhile is lost (that can only leave an
			// overlap unexplained, never explain one).
			ev.noteErr("observer", err)
			floor, prev = ev.h.now(), -1
			time.Sleep(10 * time.Millisecond)
			continue
		}
		m, ok := msg.(*goredislib.Message)
		if !ok {
			continue
		}
		ev.mu.Lock()
		if m.Channel == markerChannel {
			seq, _ := strconv.Atoi(m.Payload)
			for _, p := range ev.pending {
				ev.events[p.key][p.i].next = seq
			}
			ev.pending = ev.pending[:0]
			prev = seq
			ev.mu.Unlock()
			continue
		}
		key := strings.TrimPrefix(m.Channel, keyspacePrefix)
		ev.events[key] = append(ev.events[key], ksEvent{event: m.Payload, prev: prev, next: -1, floor: floor})
		ev.pending = append(ev.pending, pendingRef{key, len(ev.events[key]) - 1})
		if m.Payload == "evicted" {
			ev.lockEvicts++
		}
		ev.mu.Unlock()
	}
}

// lo is when e had surely not yet run: when the marker received before it
// was sent (an earlier marker's, if that one's send failed).
func (ev *evictor) lo(e ksEvent) time.Duration {
	for s := e.prev; s >= 0 && s > e.prev-100; s-- {
		if mk, ok := ev.markers[s]; ok {
			if mk.sent > e.floor {
				return mk.sent
			}
			break
		}
	}
	return e.floor
}

// hi is when e had surely run: when the reply of the marker received after
// it came (a later marker's, if that one's send failed).
func (ev *evictor) hi(e ksEvent) time.Duration {
	for s := e.next; s >= 0 && s < e.next+100; s++ {
		if mk, ok := ev.markers[s]; ok {
			return mk.replied
		}
	}
	return 1 << 62
}

// policyAt is the policy at t. Call it with ev.mu held.
func (ev *evictor) policyAt(t time.Duration) string {
	p := "?"
	for _, pp := range ev.periods {
		if pp.start <= t {
			p = pp.policy
		}
	}
	return p
}

// evictedUnder says whether x's lock was evicted before y got in (see
// above), and under which policy.
func (ev *evictor) evictedUnder(x, y *hold) (string, bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	meets := func(e ksEvent, a, b time.Duration) bool { return ev.lo(e) <= b && ev.hi(e) >= a }
	keys := make([]string, 0, len(x.entry.wrote))
	for k := range x.entry.wrote {
		if _, ok := y.entry.wrote[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		evs := ev.events[k]
		// Events run in order, so both bounds only grow: start at the
		// first that can have run after x's acquire began.
		j0 := sort.Search(len(evs), func(i int) bool { return ev.hi(evs[i]) >= x.acqStart })
		for j := j0; j < len(evs) && ev.lo(evs[j]) <= y.acqRet; j++ {
			if evs[j].event != "evicted" {
				continue
			}
			i := j - 1
			for i >= 0 && evs[i].event != "set" && evs[i].event != "del" && evs[i].event != "expired" {
				i--
			}
			if i < 0 || evs[i].event != "set" || !meets(evs[i], x.acqStart, x.acqRet) {
				continue
			}
			// x's lock is gone from here on: any later set can be y's.
			for l := j + 1; l < len(evs) && ev.lo(evs[l]) <= y.acqRet; l++ {
				if evs[l].event == "set" && meets(evs[l], y.acqStart, y.acqRet) {
					return fmt.Sprintf("the holder's key %s was evicted (%s)", kind(k), ev.policyAt(ev.lo(evs[j]))), true
				}
			}
		}
	}
	return "", false
}

// trace renders the events of the keys x and y wrote around their
// overlap, for an (a) overlap's trace.
func (ev *evictor) trace(x, y *hold) string {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	keys := map[string]bool{}
	for k := range x.entry.wrote {
		keys[k] = true
	}
	for k := range y.entry.wrote {
		keys[k] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "      first wrote %v, second wrote %v\n", x.entry.wrote, y.entry.wrote)
	for _, k := range sortedKeys(keys) {
		for _, e := range ev.events[k] {
			if lo := ev.lo(e); lo >= x.acqStart-time.Second && lo <= y.acqRet+time.Second {
				fmt.Fprintf(&b, "      %s %s in [%.3fs, %.3fs]\n", k, e.event, lo.Seconds(), ev.hi(e).Seconds())
			}
		}
	}
	return b.String()
}

// The controller under eviction. A migrate controller on E steps its own
// namespace (no followers: the fleet's migrate lockers run fixed phases)
// up to modern and back down again, unforced, once a second, through the
// policy periods. A controller that refuses unforced steps while the
// policy could evict its evidence (allkeys-*, or a policy it cannot read)
// refuses with an *migrate.UnsafeStepError whose blockers say so; one that
// does not steps. Both are counted, never failed: by the policy family,
// the outcome and, for a refusal, its blockers' kinds. A namespace whose
// keys were evicted is initialised again (or that is refused, and
// counted), or repaired to the phase what is left of it shows (or that is
// refused, and counted).
func (ev *evictor) control(ctx context.Context) {
	// No followers, no locks of its namespace: a second of silence covers
	// what init and a restore wait for.
	ctl, err := migrate.NewController(goredis.New(ev.cfg), controllerNS, migrate.WithQuietPeriod(time.Second),
		migrate.WithInitSilence(time.Second))
	if err == nil {
		_, err = ctl.Init(ctx, false)
	}
	if err != nil {
		ev.noteErr("controller", err)
		return
	}
	up := true
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ev.mu.Lock()
		family := strings.SplitN(ev.policyAt(ev.h.now()), "-", 2)[0]
		ev.mu.Unlock()
		opCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var step migrate.Step
		if up {
			step, err = ctl.Advance(opCtx, false)
		} else {
			step, err = ctl.Rollback(opCtx, false)
		}
		outcome := ""
		var unsafe *migrate.UnsafeStepError
		switch {
		case err == nil:
			outcome = "stepped"
			if step.To == migrate.PhaseModern || step.To == migrate.PhaseLegacy {
				up = !up
			}
		case errors.As(err, &unsafe):
			kinds := map[string]bool{}
			for _, b := range unsafe.Blockers {
				kinds[string(b.Kind)] = true
			}
			outcome = "refused (ErrUnsafeStep: " + strings.Join(sortedKeys(kinds), ", ") + ")"
		case errors.Is(err, migrate.ErrUnsafeStep):
			// "already at": turn round.
			outcome, up = "refused (ErrUnsafeStep: at an end)", !up
		case errors.Is(err, migrate.ErrPhaseUnknown):
			outcome = "phase unknown (namespace evicted)"
			if _, ierr := ctl.Init(opCtx, false); ierr == nil {
				outcome += ", initialised again"
				up = true
			} else if st, serr := ctl.Status(opCtx); serr == nil && st.Evidence.Valid() {
				// Part of it is left: repair to what it shows, unforced.
				if _, rerr := ctl.Repair(opCtx, st.Evidence, false); rerr == nil {
					outcome += ", repaired"
				} else {
					outcome += ", init and repair refused"
				}
			} else {
				outcome += ", init refused, nothing to repair from"
			}
		case ctx.Err() != nil:
			cancel()
			return
		default:
			outcome = fmt.Sprintf("error (%T)", err)
			ev.noteErr("controller step", err)
		}
		cancel()
		ev.mu.Lock()
		ev.steps[family+"-*: "+outcome]++
		ev.mu.Unlock()
	}
}

const controllerNS = "soak-evict"
