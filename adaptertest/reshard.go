package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/resp"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

// Reshard runs the locks on a cluster client of newCluster while the slots
// of their keys move between masters with their keys (CLUSTER SETSLOT
// IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE: redistest.SlotMove), and
// checks that the slot moves never reach the callers:
//
//   - Lockers: modern (with and without fencing) and legacy lockers take
//     and release locks in a slot moved six times. Redis answers ASK,
//     TRYAGAIN and MOVED meanwhile (counted by the nodes' INFO errorstats);
//     no call returns an error, and an independent guard sees no overlap.
//   - WaitersFollowTheSlot: waiting Lock calls (a poll of a minute, so only
//     a release notice can wake them) stay subscribed through a move —
//     their subscriptions move to the new owner — and get the lock, one
//     after the other, once the holder releases it after the move.
//   - ReleaseDuringMove: the holder releases while the slot migrates (the
//     release script, whose channel is one of its keys, gets TRYAGAIN until
//     the move ends); the release waits it out and the waiters get the lock.
//   - WaitOutlastsRefusals: a waiting Lock whose attempts are refused
//     (TRYAGAIN) for longer than the adapter follows them
//     (adapter.ClusterRetryFor) goes on waiting, and gets the lock.
//   - SubscribeAfterMove: a subscription opened by a slot map from before
//     a move (its SSUBSCRIBE refused with MOVED) opens on the new owner and
//     receives what is published there.
//   - EvalWaitFollowsMove: driver.Waiter's EvalWait, whose connection is
//     pinned to a node, pins again where the slot moved.
//   - LostReplyAfterRedirect: a command sent on after MOVED, and after ASK,
//     whose reply the new owner's fault proxy drops, reaches that node once,
//     runs once, and comes back as an unknown outcome: a redirect is never
//     taken for a lost reply, nor a lost reply for a redirect.
func Reshard(t *testing.T, f ClusterFactory) {
	cl := redistest.StartCluster(t)
	c := f.New(t, cl.Addrs())
	require.True(t, c.Cluster())
	t.Run("Lockers", func(t *testing.T) { reshardLockers(t, cl, c) })
	t.Run("WaitersFollowTheSlot", func(t *testing.T) { reshardWaiters(t, cl, c, false) })
	t.Run("ReleaseDuringMove", func(t *testing.T) { reshardWaiters(t, cl, c, true) })
	t.Run("WaitOutlastsRefusals", func(t *testing.T) { reshardRefusals(t, cl, c) })
	t.Run("SubscribeAfterMove", func(t *testing.T) { reshardSubscribe(t, cl, c) })
	t.Run("EvalWaitFollowsMove", func(t *testing.T) { reshardEvalWait(t, cl, c) })
	t.Run("LostReplyAfterRedirect", func(t *testing.T) { reshardLostReply(t, cl, f) })
}

// ClusterFactory makes the cluster clients Reshard runs.
type ClusterFactory struct {
	// New returns a client for the Redis Cluster whose nodes are at addrs.
	// It should close the client in t.Cleanup.
	New func(t *testing.T, addrs []string) driver.Client
	// NewVia is New for a client that connects to each node at the address
	// via returns for the node's own (a fault proxy in front of it), while
	// it knows the nodes by their own addresses, as the cluster names them.
	NewVia func(t *testing.T, addrs []string, via func(addr string) string) driver.Client
}

// guard counts the holders of each key, apart from the lock.
type guard struct {
	mu       sync.Mutex
	holders  map[string]int
	overlaps atomic.Int64
}

func (g *guard) enter(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holders == nil {
		g.holders = map[string]int{}
	}
	g.holders[key]++
	if g.holders[key] != 1 {
		g.overlaps.Add(1)
	}
}

func (g *guard) leave(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holders[key]--
}

// errorStats sums the nodes' INFO errorstats counts of the error codes.
func errorStats(t *testing.T, cl *redistest.Cluster, codes ...string) map[string]int {
	t.Helper()
	sum := map[string]int{}
	for _, n := range cl.Nodes() {
		conn, err := resp.Dial(n.Addr(), 2*time.Second)
		require.NoError(t, err)
		r, err := conn.Do("INFO", "errorstats")
		_ = conn.Close()
		require.NoError(t, err)
		info := resp.ParseInfo(fmt.Sprint(r))
		for _, code := range codes {
			// errorstat_ASK:count=12
			v := info["errorstat_"+code]
			if len(v) > len("count=") {
				n, err := strconv.Atoi(v[len("count="):])
				require.NoError(t, err, "errorstat_%s:%s", code, v)
				sum[code] += n
			}
		}
	}
	return sum
}

// reshardLockers: lockers of every kind contend on keys of one slot while
// it moves six times; no refusal reaches a caller and the guard sees no
// overlap.
func reshardLockers(t *testing.T, cl *redistest.Cluster, c driver.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const tag = "{reshard-lockers}"
	before := errorStats(t, cl, "ASK", "TRYAGAIN", "MOVED")
	lockers := map[string]lockbridge.Locker{
		"fenced": modern.New(c, modern.WithFencing()),
		"modern": modern.New(c),
		"legacy": legacy.New(c),
	}
	ct := &contention{stop: make(chan struct{})}
	for name, l := range lockers {
		for i := 0; i < 3; i++ {
			ct.wg.Add(1)
			go ct.run(ctx, tag, name, l, i)
		}
	}
	slot := keyslot.Of(tag)
	const moves = 6
	for i := 0; i < moves; i++ {
		m := cl.BeginSlotMove(t, slot)
		time.Sleep(40 * time.Millisecond)
		m.MoveKeys(t)
		time.Sleep(40 * time.Millisecond)
		m.Finish(t)
		time.Sleep(40 * time.Millisecond)
	}
	close(ct.stop)
	ct.wg.Wait()

	after := errorStats(t, cl, "ASK", "TRYAGAIN", "MOVED")
	refusals := map[string]int{}
	for code, n := range after {
		refusals[code] = n - before[code]
	}
	t.Logf("%d moves of slot %d: %d locks granted; the nodes refused %v (all followed)", moves, slot,
		ct.grants.Load(), refusals)
	surfaced := 0
	for _, err := range ct.errs {
		if errors.Is(err, driver.ErrMoved) || errors.Is(err, driver.ErrClusterDown) {
			surfaced++
		}
	}
	assert.Zero(t, surfaced, "cluster refusals returned to callers")
	assert.Zero(t, len(ct.errs), "errors returned to callers; the first: %v", ct.errs[:min(len(ct.errs), 3)])
	assert.Zero(t, ct.g.overlaps.Load(), "overlaps seen by the guard")
	assert.Positive(t, ct.grants.Load())
	assert.Positive(t, refusals["ASK"]+refusals["TRYAGAIN"], "the nodes answered ASK or TRYAGAIN during the moves")
}

// contention is reshardLockers' lockers at work: what they were granted,
// what the guard saw, and the errors returned to them.
type contention struct {
	g      guard
	grants atomic.Int64
	mu     sync.Mutex
	errs   []error
	wg     sync.WaitGroup
	stop   chan struct{}
}

// run is one locker's loop until stop: try one of two keys under tag, hold
// it a millisecond under the guard, unlock.
func (ct *contention) run(ctx context.Context, tag, name string, l lockbridge.Locker, i int) {
	defer ct.wg.Done()
	for n := 0; ; n++ {
		select {
		case <-ct.stop:
			return
		default:
		}
		key := fmt.Sprintf("%s:%s:%d", tag, name, (i+n)%2)
		lk, err := l.TryLock(ctx, key, 10*time.Second)
		if errors.Is(err, lockbridge.ErrNotObtained) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			ct.fail(fmt.Errorf("%s TryLock: %w", name, err))
			continue
		}
		ct.g.enter(key)
		ct.grants.Add(1)
		time.Sleep(time.Millisecond)
		ct.g.leave(key)
		if err := lk.Unlock(ctx); err != nil {
			ct.fail(fmt.Errorf("%s Unlock: %w", name, err))
		}
	}
}

func (ct *contention) fail(err error) {
	ct.mu.Lock()
	ct.errs = append(ct.errs, err)
	ct.mu.Unlock()
}

// shardSubscribers is PUBSUB SHARDNUMSUB ch on node.
func shardSubscribers(t *testing.T, node *redistest.Server, ch string) int64 {
	conn, err := resp.Dial(node.Addr(), 2*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	r, err := conn.Do("PUBSUB", "SHARDNUMSUB", ch)
	require.NoError(t, err)
	rr, _ := r.([]any)
	require.Len(t, rr, 2, "%#v", r)
	n, _ := rr[1].(int64)
	return n
}

// waitSubscribers waits until node counts want subscribers of ch.
func waitSubscribers(t *testing.T, node *redistest.Server, ch string, want int64, why string) {
	t.Helper()
	require.Eventually(t, func() bool { return shardSubscribers(t, node, ch) == want }, 5*time.Second, 5*time.Millisecond,
		"%s: %s has %d subscribers of %s, want %d", why, node.Addr(), shardSubscribers(t, node, ch), ch, want)
}

// handOff is one waiter's turn.
type handOff struct {
	got, released time.Time
	err           error
}

// reshardWaiters: waiters on a held lock subscribe to its release notices;
// the lock's slot moves (and, with duringMove, the holder releases while it
// moves); every waiter is woken by a notice, in turn, with no overlap.
func reshardWaiters(t *testing.T, cl *redistest.Cluster, c driver.Client, duringMove bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := "{reshard-waiters}:lock"
	if duringMove {
		key = "{reshard-release}:lock"
	}
	ch := key + ":released"
	slot := keyslot.Of(key)
	hl, err := modern.New(c).TryLock(ctx, key, 20*time.Second)
	require.NoError(t, err)

	// A poll of a minute and a holder with 20 s left: within the 15 s the
	// waiters have, only a release notice wakes them.
	const waiters = 3
	var g guard
	turns := make(chan handOff, waiters)
	for i := 0; i < waiters; i++ {
		l := modern.New(c, modern.WithBackoff(lockbridge.LinearBackoff(time.Minute, time.Minute)))
		go func() { turns <- waitTurn(ctx, l, key, &g) }()
	}
	waitSubscribers(t, cl.Owner(t, slot), ch, waiters, "before the move")

	m := cl.BeginSlotMove(t, slot)
	m.MoveKeys(t)
	prev := releaseAcrossMove(t, ctx, m, hl, ch, waiters, duringMove)
	var got []handOff
	for i := 0; i < waiters; i++ {
		h := <-turns
		require.NoError(t, h.err, "waiter %d", i)
		got = append(got, h)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].got.Before(got[j].got) })
	var waits []time.Duration
	for _, h := range got {
		waits = append(waits, h.got.Sub(prev).Round(100*time.Microsecond))
		prev = h.released
	}
	t.Logf("slot %d moved to %s; each waiter got the lock this long after the release before it: %v", slot,
		m.To().Addr(), waits)
	assert.Zero(t, g.overlaps.Load(), "overlaps seen by the guard")
}

// waitTurn is one waiter of reshardWaiters: it waits up to 15 s for key,
// holds it 20 ms under the guard g, and unlocks.
func waitTurn(ctx context.Context, l lockbridge.Locker, key string, g *guard) handOff {
	lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	lk, err := l.Lock(lctx, key, 20*time.Second)
	h := handOff{got: time.Now(), err: err}
	if err == nil {
		g.enter(key)
		time.Sleep(20 * time.Millisecond)
		g.leave(key)
		h.released = time.Now()
		h.err = lk.Unlock(ctx)
	}
	return h
}

// releaseAcrossMove ends the slot move m and releases the holder's lock hl:
// with duringMove the release is sent while the slot migrates (and must
// wait for the move's end), otherwise after the subscriptions have followed
// the slot. It returns when the release returned.
func releaseAcrossMove(t *testing.T, ctx context.Context, m *redistest.SlotMove, hl lockbridge.Lock, ch string,
	waiters int64, duringMove bool) time.Time {
	released := make(chan time.Time, 1)
	unlock := func() {
		err := hl.Unlock(ctx)
		assert.NoError(t, err, "the holder's release")
		released <- time.Now()
	}
	if duringMove {
		// The release script names its channel in KEYS, which no node
		// has: the new owner answers TRYAGAIN until the move ends.
		go unlock()
		time.Sleep(150 * time.Millisecond)
		select {
		case <-released:
			t.Fatal("the release ran while the slot was migrating")
		default:
		}
		m.Finish(t)
	} else {
		m.Finish(t)
		assert.Eventually(t, func() bool { return shardSubscribers(t, m.To(), ch) == waiters }, 5*time.Second,
			5*time.Millisecond, "the subscriptions follow the slot to its new owner, %s", m.To().Addr())
		unlock()
	}
	return <-released
}

func reshardRefusals(t *testing.T, cl *redistest.Cluster, c driver.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := "{reshard-refused}:lock"
	slot := keyslot.Of(key)
	hl, err := modern.New(c, modern.WithFencing()).TryLock(ctx, key, 20*time.Second)
	require.NoError(t, err)
	before := errorStats(t, cl, "TRYAGAIN")

	// The waiter's fenced acquire names the lock and its fence counter.
	waiter := modern.New(c, modern.WithFencing(),
		modern.WithBackoff(lockbridge.LinearBackoff(50*time.Millisecond, 50*time.Millisecond)))
	done := make(chan error, 1)
	go func() {
		lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		lk, err := waiter.Lock(lctx, key, time.Second)
		if err == nil {
			err = lk.Unlock(ctx)
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // waiting

	// Half-way: the counter on the new owner, the lock on the old one,
	// which answers TRYAGAIN to a command that names both.
	m := cl.BeginSlotMove(t, slot)
	m.MigrateKeys(t, key+modern.FenceSuffix)
	time.Sleep(adapter.ClusterRetryFor + 500*time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the waiting Lock returned while the slot was half moved: %v", err)
	default:
	}
	refused := errorStats(t, cl, "TRYAGAIN")["TRYAGAIN"] - before["TRYAGAIN"]
	m.MoveKeys(t)
	m.Finish(t)
	require.NoError(t, hl.Unlock(ctx))
	select {
	case err := <-done:
		require.NoError(t, err, "the waiting Lock")
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting Lock did not return")
	}
	t.Logf("the old owner refused %d attempts with TRYAGAIN for %v; the waiter went on waiting", refused,
		adapter.ClusterRetryFor+500*time.Millisecond)
	assert.Positive(t, refused)
}

var evalWaitScript = driver.NewScript("adaptertest/evalwait.lua",
	"-- returns GET KEYS[1]\nreturn redis.call('GET', KEYS[1])")

func reshardEvalWait(t *testing.T, cl *redistest.Cluster, c driver.Client) {
	ctx := ctx(t)
	w, ok := c.(driver.Waiter)
	if !ok {
		return
	}
	key := "{reshard-evalwait}:k"
	ok, err := c.SetNX(ctx, key, "v")
	require.NoError(t, err)
	require.True(t, ok)
	r, _, err := w.EvalWait(ctx, evalWaitScript, []string{key}, 0, 100*time.Millisecond)
	if errors.Is(err, driver.ErrNoPin) {
		return
	}
	require.NoError(t, err)
	require.Equal(t, "v", r)

	_, n := cl.MoveSlot(t, keyslot.Of(key))
	require.Equal(t, 1, n)
	r, _, err = w.EvalWait(ctx, evalWaitScript, []string{key}, 0, 100*time.Millisecond)
	require.NoError(t, err, "EvalWait pinned again where the slot went")
	assert.Equal(t, "v", r)
}

func reshardLostReply(t *testing.T, cl *redistest.Cluster, f ClusterFactory) {
	ctx := ctx(t)
	proxies := map[string]*faultproxy.Proxy{}
	for _, n := range cl.Nodes() {
		proxies[n.Addr()] = faultproxy.Start(t, n.Addr())
	}
	c := f.NewVia(t, cl.Addrs(), func(addr string) string {
		if p, ok := proxies[addr]; ok {
			return p.Addr()
		}
		return addr
	})
	key := "{reshard-lost}:k"
	slot := keyslot.Of(key)
	_, _, err := c.Get(ctx, key) // the client reads the slot map
	require.NoError(t, err)
	setTo := func(n *redistest.Server) func() int { return proxies[n.Addr()].Count(faultproxy.Command("SET")) }

	for _, step := range []string{"MOVED", "ASK"} {
		t.Run(step, func(t *testing.T) {
			m := cl.BeginSlotMove(t, slot)
			if step == "MOVED" {
				m.Finish(t) // the client's slot map is old now
			}
			atOld, atNew := setTo(m.From()), setTo(m.To())
			proxies[m.To().Addr()].DropReply(faultproxy.Command("SET"), 1, faultproxy.Close)
			_, err := c.SetNXPX(ctx, key+step, "token", time.Minute)
			require.Error(t, err)
			assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "the reply lost after following %s", step)
			time.Sleep(100 * time.Millisecond) // a resend would have gone out by now
			assert.Equal(t, 1, atOld(), "the old owner answered %s", step)
			assert.Equal(t, 1, atNew(), "sent to the new owner once, never again")
			conn, err := resp.Dial(m.To().Addr(), 2*time.Second)
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.Do("ASKING") // the slot may still be importing
			require.NoError(t, err)
			v, err := conn.Do("GET", key+step)
			require.NoError(t, err)
			assert.Equal(t, "token", v, "it ran, on the new owner")
			m.MoveKeys(t) // the MOVED step's key, for one
			m.Finish(t)
		})
	}
}

func reshardSubscribe(t *testing.T, cl *redistest.Cluster, c driver.Client) {
	ctx := ctx(t)
	ch := "{reshard-subscribe}:released"
	_, err := c.Eval(ctx, publishScript, []string{ch}, "SPUBLISH", "before") // the client reads the slot map
	require.NoError(t, err)
	to := cl.MoveEmptySlot(t, keyslot.Of(ch))

	sub, err := c.Subscribe(ctx, ch)
	require.NoError(t, err, "subscribed where the slot went")
	defer sub.Close()
	assert.Equal(t, int64(1), shardSubscribers(t, to, ch))
	n, err := c.Eval(ctx, publishScript, []string{ch}, "SPUBLISH", "after")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	select {
	case m := <-sub.Messages():
		assert.Equal(t, driver.Message{Channel: ch, Payload: "after"}, m)
	case <-time.After(5 * time.Second):
		t.Fatalf("no message: %v", sub.Err())
	}
}
