package interop

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/redisson"
)

// The differential test: one sequence of operations, run once by Java
// Redisson (two worker processes, two threads) and once by the Go package
// (two Owners), each on a lock name of its own on one server. After every
// step the stored state is read — the hash's fields (by role) and counts,
// the lock's PTTL, the fair line and its timeouts, the unlock latches — and
// the messages published on the lock's channels are recorded. Both runs
// must leave the same state (PTTLs and timeouts within diffTolerance: the
// two runs are not at the same instant) and publish the same messages.
// Fenced locks are left out: there the token counter differs by design
// (Go floors it at the server's clock; TestRedissonFencedTokens).

const (
	diffLease     = 30 * time.Second
	diffTolerance = 3 * time.Second
)

// diffState is what one step leaves on the server, fields named by role.
type diffState struct {
	Hash     map[string]int64 // role -> count
	PTTL     int64            // ms; -2 absent
	Queue    []string         // roles, in line order
	Timeouts map[string]int64 // role -> score less the server's now (ms)
	Latches  int              // unlock latches left
}

func (s diffState) String() string {
	return fmt.Sprintf("hash %v pttl %d queue %v timeouts %v latches %d", s.Hash, s.PTTL, s.Queue, s.Timeouts, s.Latches)
}

// diffActor is one holder identity: a Java thread or a Go Owner.
type diffActor interface {
	field() string     // the field, or for Java its "<client id>:" prefix
	lock()             // lock(), waits until held
	startLock()        // lock() that may wait: finish with waitLocked
	waitLocked()       // the lock startLock asked for is held
	tryNow() bool      // tryLock without a wait
	unlock()           // unlock one hold
	forceUnlock() bool // forceUnlock
}

type javaActor struct {
	t      *testing.T
	j      *java
	prefix string
}

func (a *javaActor) field() string { return a.prefix }
func (a *javaActor) lock()         { a.startLock(); a.waitLocked() }
func (a *javaActor) startLock()    { a.j.send("lock") }
func (a *javaActor) waitLocked()   { javaLocked(a.t, a.j, 30*time.Second) }
func (a *javaActor) tryNow() bool {
	a.j.send("try 0")
	l := a.j.next(30 * time.Second)
	require.True(a.t, l == "timeout" || strings.HasPrefix(l, "locked"), l)
	return l != "timeout"
}
func (a *javaActor) unlock() { a.j.send("unlock"); javaUnlocked(a.t, a.j, 30*time.Second) }
func (a *javaActor) forceUnlock() bool {
	a.j.send("force")
	return a.j.expect("forced", 30*time.Second) == "true"
}

type goActor struct {
	t     *testing.T
	l     *redisson.Locker
	o     *redisson.Owner
	name  string
	holds []lockbridge.Lock
	got   chan lockbridge.Lock
}

func (a *goActor) field() string { return a.o.Field() }
func (a *goActor) lock()         { a.startLock(); a.waitLocked() }
func (a *goActor) startLock() {
	a.got = make(chan lockbridge.Lock, 1)
	go func() {
		lk, err := a.o.Lock(context.Background(), a.name, diffLease)
		if err != nil {
			lk = nil
		}
		a.got <- lk
	}()
}
func (a *goActor) waitLocked() {
	select {
	case lk := <-a.got:
		require.NotNil(a.t, lk, "the Go owner's Lock failed")
		a.holds = append(a.holds, lk)
	case <-time.After(30 * time.Second):
		a.t.Fatal("the Go owner's Lock never returned")
	}
}
func (a *goActor) tryNow() bool {
	lk, err := a.o.TryLock(context.Background(), a.name, diffLease)
	if err != nil {
		require.ErrorIs(a.t, err, lockbridge.ErrNotObtained)
		return false
	}
	a.holds = append(a.holds, lk)
	return true
}
func (a *goActor) unlock() {
	lk := a.holds[len(a.holds)-1]
	a.holds = a.holds[:len(a.holds)-1]
	require.NoError(a.t, lk.Unlock(context.Background()))
}
func (a *goActor) forceUnlock() bool {
	ok, err := a.l.ForceUnlock(context.Background(), a.name)
	require.NoError(a.t, err)
	return ok
}

// diffRun records one side's run: its states after each step and the
// messages heard on its lock's channels.
type diffRun struct {
	t      *testing.T
	rdb    *goredislib.Client
	name   string
	roles  map[string]string // field or field prefix -> role
	kept   bool              // the side leaves its latches to expire (Redisson 3.x)
	states []diffState
	steps  []string

	mu   sync.Mutex
	msgs []string
}

func (r *diffRun) role(field string) string {
	for p, role := range r.roles {
		if field == p || (strings.HasSuffix(p, ":") && strings.HasPrefix(field, p)) {
			return role
		}
	}
	return "?" + field
}

// listen records the messages on the lock's channel and its waiters'.
func (r *diffRun) listen(ctx context.Context) func() {
	ch := redissonChannel(r.name)
	ps := r.rdb.PSubscribe(ctx, ch, ch+":*")
	_, err := ps.Receive(ctx)
	require.NoError(r.t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ps.Channel() {
			c := "<channel>"
			if rest, ok := strings.CutPrefix(m.Channel, ch+":"); ok {
				c += ":" + r.role(rest)
			}
			r.mu.Lock()
			r.msgs = append(r.msgs, c+" "+m.Payload)
			r.mu.Unlock()
		}
	}()
	return func() { _ = ps.Close(); <-done }
}

func (r *diffRun) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// snap reads the state after a step.
func (r *diffRun) snap(step string) {
	ctx := context.Background()
	t := r.t
	var latches int
	// Redisson 4.x deletes a latch once it has the reply (without waiting
	// for the DEL), as the Go package does; 3.x leaves it to expire.
	deadline := time.Now().Add(time.Second)
	for {
		k, err := r.rdb.Keys(ctx, redissonLatches(r.name)).Result()
		require.NoError(t, err)
		latches = len(k)
		if latches == 0 || r.kept || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s := diffState{Hash: map[string]int64{}, Timeouts: map[string]int64{}, Latches: latches}
	h, err := r.rdb.HGetAll(ctx, r.name).Result()
	require.NoError(t, err)
	for f, v := range h {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err)
		s.Hash[r.role(f)] = n
	}
	pttl, err := r.rdb.Do(ctx, "PTTL", r.name).Int64()
	require.NoError(t, err)
	s.PTTL = pttl
	q, err := r.rdb.LRange(ctx, prefixedName("redisson_lock_queue", r.name), 0, -1).Result()
	require.NoError(t, err)
	for _, f := range q {
		s.Queue = append(s.Queue, r.role(f))
	}
	now, err := r.rdb.Time(ctx).Result()
	require.NoError(t, err)
	z, err := r.rdb.ZRangeWithScores(ctx, prefixedName("redisson_lock_timeout", r.name), 0, -1).Result()
	require.NoError(t, err)
	for _, m := range z {
		s.Timeouts[r.role(m.Member.(string))] = int64(m.Score) - now.UnixMilli()
	}
	r.states = append(r.states, s)
	r.steps = append(r.steps, step)
}

func prefixedName(prefix, name string) string { return prefix + ":{" + name + "}" }

// diffSequence is the sequence both sides run: a and b are two holders of
// one lock (fair or not).
func diffSequence(r *diffRun, a, b diffActor, fair bool) {
	t := r.t
	a.lock()
	r.snap("a locks")
	a.lock()
	r.snap("a locks again (reentrant)")
	a.unlock()
	r.snap("a unlocks one hold")
	require.False(t, b.tryNow(), "b cannot take it")
	r.snap("b tries")
	if fair {
		b.startLock()
		require.Eventually(t, func() bool {
			n, err := r.rdb.LLen(context.Background(), prefixedName("redisson_lock_queue", r.name)).Result()
			return err == nil && n == 1
		}, 30*time.Second, 5*time.Millisecond, "b queued")
		r.snap("b waits in line")
		a.unlock()
		b.waitLocked()
		r.snap("a unlocks, b is served")
	} else {
		a.unlock()
		r.snap("a unlocks")
		b.lock()
		r.snap("b locks")
	}
	b.unlock()
	r.snap("b unlocks")
	a.lock()
	require.True(t, b.forceUnlock(), "b forces the lock open")
	r.snap("b forces a's lock open")
	require.False(t, b.forceUnlock())
	r.snap("b forces again: nothing")
}

// compare checks that the Java and Go runs left the same states and
// published the same messages.
func diffCompare(t *testing.T, javaRun, goRun *diffRun) {
	require.Equal(t, javaRun.steps, goRun.steps)
	for i, step := range javaRun.steps {
		j, g := javaRun.states[i], goRun.states[i]
		t.Logf("%-28s java: %v", step, j)
		t.Logf("%-28s go:   %v", "", g)
		assert.Equal(t, j.Hash, g.Hash, "%s: the hash", step)
		assert.Equal(t, j.Queue, g.Queue, "%s: the line", step)
		assert.Zero(t, g.Latches, "%s: Go deletes its latches", step)
		if !javaRun.kept {
			assert.Zero(t, j.Latches, "%s: Redisson 4.x deletes its latches", step)
		}
		if j.PTTL < 0 || g.PTTL < 0 {
			assert.Equal(t, j.PTTL, g.PTTL, "%s: PTTL", step)
		} else {
			assert.InDelta(t, j.PTTL, g.PTTL, float64(diffTolerance.Milliseconds()), "%s: PTTL", step)
		}
		assert.Equal(t, sortedKeys(j.Timeouts), sortedKeys(g.Timeouts), "%s: timeouts", step)
		for role, jt := range j.Timeouts {
			assert.InDelta(t, jt, g.Timeouts[role], float64(diffTolerance.Milliseconds()), "%s: %s's timeout", step, role)
		}
	}
	var jm, gm []string
	require.Eventually(t, func() bool {
		jm, gm = javaRun.messages(), goRun.messages()
		return len(jm) == len(gm)
	}, 5*time.Second, 5*time.Millisecond)
	t.Logf("messages: java %v, go %v", jm, gm)
	assert.Equal(t, jm, gm, "the same messages on the same channels")
	assert.NotEmpty(t, jm)
}

func sortedKeys(m map[string]int64) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// TestRedissonSameState: the differential test (above), for the plain and
// the fair lock, on both Redisson versions.
func TestRedissonSameState(t *testing.T) {
	for _, w := range redissonWorkers {
		for _, fair := range []bool{false, true} {
			w, fair := w, fair
			kind := map[bool]string{false: "plain", true: "fair"}[fair]
			t.Run(w.name()+"/"+kind, func(t *testing.T) {
				r := newRdsEnv(t, false)
				ctx := context.Background()
				rdb := r.nodes[0]
				lease := strconv.FormatInt(diffLease.Milliseconds(), 10)

				jr := &diffRun{t: t, rdb: rdb, name: "diff-java-" + kind, roles: map[string]string{},
					kept: strings.HasPrefix(w.version, "3.")}
				flags := func() javaFlags {
					return javaFlags{"name": jr.name, "lease-ms": lease, "fair": strconv.FormatBool(fair)}
				}
				ja, ida := startRedisson(t, w, r, flags())
				jb, idb := startRedisson(t, w, r, flags())
				jr.roles[ida+":"], jr.roles[idb+":"] = "a", "b"
				stop := jr.listen(ctx)
				diffSequence(jr, &javaActor{t: t, j: ja, prefix: ida + ":"}, &javaActor{t: t, j: jb, prefix: idb + ":"}, fair)
				stop()

				gr := &diffRun{t: t, rdb: rdb, name: "diff-go-" + kind, roles: map[string]string{}}
				opts := []redisson.Option{}
				if fair {
					opts = append(opts, redisson.WithFair(redisson.DefaultFairWait))
				}
				locker := redisson.New(r.lock, opts...)
				ga := &goActor{t: t, l: locker, o: locker.NewOwner(), name: gr.name}
				gb := &goActor{t: t, l: locker, o: locker.NewOwner(), name: gr.name}
				gr.roles[ga.field()], gr.roles[gb.field()] = "a", "b"
				stop = gr.listen(ctx)
				diffSequence(gr, ga, gb, fair)
				stop()

				diffCompare(t, jr, gr)
			})
		}
	}
}
