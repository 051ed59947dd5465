package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
	"github.com/lockbridge/lockbridge/internal/runtime/retry"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

var _ lockbridge.Locker = (*Locker)(nil)

// minNodes is the fewest clients New accepts.
const minNodes = 3

// undoRecheck is how long the release that undoes a failed acquire waits
// before looking a second time on a node whose acquire got no answer, for a
// SET still on its way when the first look found no key.
const undoRecheck = 2 * time.Millisecond

// Locker takes Redlock locks: the modern lock (same token, same scripts) on
// each of N independent Redis masters, held when a majority has it. Build it
// with New. It is safe for concurrent use, holds no goroutine of its own and
// needs no Close: each round runs one goroutine per node and waits for all
// of them.
type Locker struct {
	nodes  []modernproto.Node
	names  []string // WithNodeNames, or nil
	quorum int

	idMu  sync.Mutex
	ids   []string // each node's server run_id, "" until read
	idErr error    // two nodes on one server, once found
	cfg   config
	err   error // invalid arguments or options, returned by every TryLock and Lock
	tel   *telemetry.T
}

// New returns a Locker over clients, one per independent Redis master (not
// replicas of one another, not nodes of one cluster: each must be able to
// fail alone). It needs at least 3 clients, and an odd number is
// recommended: a quorum is N/2+1, so 4 nodes survive one failure, as 3 do,
// while costing a fourth server. Fewer than 3 clients, a nil client, the
// same client given twice or an invalid option are not reported here but by
// every TryLock and Lock, with an error wrapping lockbridge.ErrInvalid. Two
// different client objects on one server are found at the first call that
// reaches them: each node's server run_id is read once (INFO server), and
// two nodes with one run_id make every call fail with ErrInvalid (a node
// that cannot be asked — down, or an ACL user without INFO — is asked again
// at the next call).
func New(clients []driver.Client, opts ...Option) *Locker {
	l := &Locker{cfg: defaults()}
	for _, o := range opts {
		if o == nil {
			l.cfg.errs.Invalid("nil option")
			continue
		}
		o(&l.cfg)
	}
	if len(clients) < minNodes {
		l.cfg.errs.Invalid("%d clients: Redlock needs at least %d independent masters", len(clients), minNodes)
	}
	if l.cfg.names != nil && len(l.cfg.names) != len(clients) {
		l.cfg.errs.Invalid("%d node names for %d clients", len(l.cfg.names), len(clients))
	}
	nodes := make([]modernproto.Node, len(clients))
	for i, c := range clients {
		if c == nil {
			l.cfg.errs.Invalid("nil driver.Client at index %d", i)
			continue
		}
		for j := 0; j < i; j++ {
			if sameClient(clients[j], c) {
				l.cfg.errs.Invalid("clients %d and %d are the same client: Redlock needs independent masters", j, i)
			}
		}
		nodes[i] = modernproto.NewNode("redlock", c)
	}
	l.err = l.cfg.errs.Err()
	l.tel = l.cfg.errs.Reporter()
	if l.err == nil {
		l.nodes, l.names = nodes, l.cfg.names
		l.quorum = len(nodes)/2 + 1
		l.ids = make([]string, len(nodes))
	}
	return l
}

// sameClient reports whether a and b are the same driver.Client value (the
// same adapter around the same client library object). Values whose
// dynamic type cannot be compared are taken as different.
func sameClient(a, b driver.Client) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// checkServers reads, once per node, the run_id of the server behind it
// (INFO server) and refuses, with ErrInvalid, two nodes on one server:
// different client objects to the same address, which sameClient cannot
// see. A run_id is random per server process, so two distinct servers
// never share one. A node that cannot be asked (down, or an ACL without
// INFO) is left unchecked and asked again at the next call: the check only
// ever refuses, it never lets a call through that would otherwise fail.
func (l *Locker) checkServers(ctx context.Context) error {
	l.idMu.Lock()
	defer l.idMu.Unlock()
	if l.idErr != nil {
		return l.idErr
	}
	// Ask the unknown nodes in parallel, so a hung node costs one node
	// timeout, not one per node.
	var wg sync.WaitGroup
	for i := range l.nodes {
		if l.ids[i] != "" {
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ictx, cancel := context.WithTimeout(ctx, l.cfg.idTimeout())
			defer cancel()
			r, err := l.nodes[i].Client().Do(ictx, "INFO", "server")
			if err != nil {
				return
			}
			text, _ := r.(string)
			l.ids[i] = runID(text) // each goroutine writes its own element
		}(i)
	}
	wg.Wait()
	for i, id := range l.ids {
		for j := 0; j < i && id != ""; j++ {
			if l.ids[j] == id {
				l.idErr = fmt.Errorf(
					"redlock: %w: nodes %d and %d are the same server (run_id %s): Redlock needs independent masters",
					lockbridge.ErrInvalid, j, i, id)
				return l.idErr
			}
		}
	}
	return nil
}

// runID returns the run_id field of an INFO reply ("" if absent).
func runID(info string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v
		}
	}
	return ""
}

// Quorum returns how many nodes a lock needs: N/2+1 (0 for a Locker built
// with invalid arguments).
func (l *Locker) Quorum() int {
	if l == nil {
		return 0
	}
	return l.quorum
}

// timing is the lease arithmetic of one ttl.
type timing struct {
	ttl         time.Duration // the lease sent to every node (whole ms)
	drift       time.Duration // the clock-drift allowance: ttl×factor + drift
	nodeTimeout time.Duration // the bound on each node's answer
}

// validity is what is left of a lease sent at start, now.
func (t *timing) validity(start time.Time) time.Duration {
	return t.ttl - time.Since(start) - t.drift
}

// timing validates a ttl and derives the drift allowance and node timeout.
func (l *Locker) timing(ttl time.Duration) (*timing, error) {
	if err := check.TTL("redlock", ttl, time.Millisecond); err != nil {
		return nil, err
	}
	ttl = ttl.Truncate(time.Millisecond) // PX takes whole milliseconds
	t := &timing{ttl: ttl, drift: time.Duration(float64(ttl)*l.cfg.driftFactor) + l.cfg.drift,
		nodeTimeout: l.cfg.nodeTimeout}
	if t.nodeTimeout == 0 {
		t.nodeTimeout = min(max(ttl/10, time.Millisecond), defaultNodeTimeoutMax)
	}
	if t.drift+t.nodeTimeout >= ttl {
		return nil, fmt.Errorf("redlock: %w: ttl %v leaves no validity after the drift allowance %v and the node timeout %v",
			lockbridge.ErrInvalid, ttl, t.drift, t.nodeTimeout)
	}
	return t, nil
}

// prepare validates a call's arguments and derives the lock's names and
// timing.
func (l *Locker) prepare(ctx context.Context, key string, ttl time.Duration) (modernproto.Names, *timing, error) {
	if err := check.Context("redlock", ctx); err != nil {
		return modernproto.Names{}, nil, err
	}
	if l == nil || (l.err == nil && len(l.nodes) == 0) {
		return modernproto.Names{}, nil, lockopt.Zero("redlock")
	}
	if l.err != nil {
		return modernproto.Names{}, nil, l.err
	}
	if err := check.Key("redlock", key); err != nil {
		return modernproto.Names{}, nil, err
	}
	t, err := l.timing(ttl)
	if err != nil {
		return modernproto.Names{}, nil, err
	}
	if err := l.checkServers(ctx); err != nil {
		return modernproto.Names{}, nil, err
	}
	n, _ := modernproto.NewNames(key, false) // no fencing: always ok
	return n, t, nil
}

// TryLock makes one round: it sends the acquire (SET key token NX PX ttl,
// one token for all nodes) to every node in parallel, each bounded by the
// node timeout, and waits for all answers. The lock is obtained when a
// majority acquired and validity is left: ttl − (time the round took) − the
// drift allowance > 0; its ExpiresAt is the end of that validity. Otherwise
// the round is undone — the release goes, in parallel on a detached context
// bounded by the node timeout, to every node that acquired or did not
// answer (its SET may have landed) — and the error is a *QuorumError
// wrapping lockbridge.ErrNotObtained and saying what each node answered.
// Nodes that are down count against the majority: with all down the error
// is still a *QuorumError. When ctx ends during the round, the error also
// wraps ctx.Err(). The Lock returned is a *Lock.
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpTryLock,
		l.tryLock, key, ttl)
}

func (l *Locker) tryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	n, t, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	lk, _, err := l.try(ctx, &n, t)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", err, cerr)
		}
		return nil, err
	}
	return lk, nil
}

// Lock takes the lock key for ttl, making rounds as TryLock does until one
// succeeds, the backoff gives up (the error is then the last round's
// *QuorumError, wrapping lockbridge.ErrNotObtained), or ctx ends: then the
// error wraps both lockbridge.ErrNotObtained and ctx.Err(). Nodes that are
// down do not end the wait: they may come back.
//
// Between rounds Lock sleeps for its backoff's delay (WithBackoff;
// exponential with jitter by default) plus up to a quarter more, at random,
// so that contenders whose rounds split the votes do not retry in step; but
// never longer than it takes for enough holders' leases to run out for a
// majority to be free (each failed round learns the holders' remaining
// leases), plus jitter. Redlock waiters poll: there are no release
// notifications across nodes. The Lock returned is a *Lock.
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpLock, l.lock,
		key, ttl)
}

func (l *Locker) lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	n, t, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	lk, err := retry.Loop(ctx, l.tel, jittered{l.cfg.backoff}, nil,
		func(ctx context.Context) (*Lock, time.Duration, error) {
			return l.try(ctx, &n, t)
		})
	if err != nil {
		return nil, err
	}
	return lk, nil
}

// jittered adds up to a quarter of each delay of a Backoff, drawn at
// random, so that contenders whose rounds split the votes do not come back
// in step even with a backoff that has no jitter of its own.
type jittered struct{ lockbridge.Backoff }

func (j jittered) Delay(n int) (time.Duration, bool) {
	d, ok := j.Backoff.Delay(n)
	if ok && d > 0 {
		d += time.Duration(rand.Int63n(int64(d/4) + 1))
	}
	return d, ok
}

// try makes one round and, when it succeeds, builds the Lock. When it fails
// because of other holders, it also returns how long until a majority could
// be free (0 if unknown).
func (l *Locker) try(ctx context.Context, n *modernproto.Names, t *timing) (*Lock, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("redlock: lock %q: %w: %w", n.Key, lockbridge.ErrNotObtained, err)
	}
	token, err := modernproto.MakeToken("redlock", l.cfg.token)
	if err != nil {
		return nil, 0, err
	}
	arg := any(token) // boxed once for every script of this lock
	res := l.results()
	start := time.Now()
	got := l.round(ctx, t.nodeTimeout, res, nil, func(ctx context.Context, nd *modernproto.Node, r *NodeResult) error {
		ok, v, err := nd.Acquire(ctx, n, arg, t.ttl)
		switch {
		case err != nil:
			return err
		case ok:
			r.Status = OK
		default:
			r.Status = Taken
			r.HolderTTL = time.Duration(v) * time.Millisecond
		}
		return nil
	})
	validity := t.validity(start)
	if got >= l.quorum && validity > 0 {
		lk := &Lock{locker: l, names: *n, token: token, arg: arg}
		lk.timing.Store(t)
		lk.lease.Init("redlock", start, t.ttl-t.drift)
		if l.cfg.autoRefresh {
			lk.lease.Observe(l.tel, n.Key)
			lk.lease.AutoRefresh(ctx, lk.autoRefresh)
		}
		return lk, 0, nil
	}
	undone := l.undo(ctx, n, arg, res, t.nodeTimeout)
	qe := &QuorumError{op: opAcquire, Key: n.Key, Need: l.quorum, Got: got, Nodes: res}
	if got >= l.quorum {
		qe.validity = validity
	}
	// A node whose acquire got no reply may hold our token after all; the
	// undo removed it (by our unique token) wherever the release answered.
	// Only when the nodes that may still hold it could make a majority is
	// the round's outcome unknown; otherwise it is settled: not obtained.
	maybe := 0
	for i, r := range res {
		if !undone[i] && (r.Status == OK || (r.Status == Failed && errors.Is(r.Err, lockbridge.ErrUnknownOutcome))) {
			maybe++
		}
	}
	qe.unknown = maybe >= l.quorum
	return nil, l.freeIn(res), qe
}

// undo releases token on every node that acquired it or did not answer,
// after a failed round, in parallel, on a context detached from ctx and
// bounded by timeout. Nodes that answered Taken are skipped: our SET did not
// land there. A node that did not answer and now has no key is looked at a
// second time, shortly after, for a SET still on its way. It reports, by
// node, whether our token is gone from there for good: the release
// answered, and, where the acquire got no reply, found our token.
func (l *Locker) undo(ctx context.Context, n *modernproto.Names, token any, acq []NodeResult,
	timeout time.Duration) []bool {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	res := l.results()
	ours := make([]bool, len(acq)) // by node: the release found our token, and deleted it
	l.round(uctx, timeout, res, func(i int) bool { return acq[i].Status != Taken }, func(ctx context.Context,
		nd *modernproto.Node, r *NodeResult) error {
		for look := 1; ; look++ {
			code, err := nd.Release(ctx, n, token)
			ours[r.Index] = err == nil && code == modernproto.Ours
			if err != nil || code != modernproto.Absent || look == 2 || acq[r.Index].Status != Failed {
				return err
			}
			t := time.NewTimer(undoRecheck)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
	})
	undone := make([]bool, len(res))
	for i, r := range res {
		// The release answered (or was not needed: Taken). Where the
		// acquire got no reply, only a release that found our token
		// settles it: without one, the SET may still be on its way and
		// run after the release.
		undone[i] = r.Status != Failed && (acq[i].Status != Failed || ours[i])
	}
	return undone
}

// freeIn is how long until enough of the holders seen by a failed acquire
// round have seen their leases run out for a majority of the nodes to be
// free, with jitter so that waiters do not all come back together; 0 when
// it cannot tell (nodes failed, or holders without expiry).
func (l *Locker) freeIn(res []NodeResult) time.Duration {
	need := l.quorum
	var left []time.Duration
	for _, r := range res {
		switch {
		case r.Status == OK:
			need-- // free again: the round released it
		case r.Status == Taken && r.HolderTTL >= 0:
			left = append(left, max(r.HolderTTL, time.Millisecond))
		}
	}
	if need <= 0 || need > len(left) {
		return 0
	}
	sort.Slice(left, func(i, j int) bool { return left[i] < left[j] })
	d := left[need-1]
	return d + time.Duration(rand.Int63n(int64(d/4+time.Millisecond)))
}

// results returns a result per node, with its index and name.
func (l *Locker) results() []NodeResult {
	res := make([]NodeResult, len(l.nodes))
	for i := range res {
		res[i].Index = i
		if l.names != nil {
			res[i].Name = l.names[i]
		}
	}
	return res
}

// round runs fn on every node for which do returns true (all when do is
// nil), in parallel, on a context that ends after timeout, and returns once
// every call has returned, with how many results say OK. fn records the
// node's answer in r; an error it returns makes the node Failed, with the
// error — ErrNodeTimeout when the node's time ran out while ctx had not
// ended.
func (l *Locker) round(ctx context.Context, timeout time.Duration, res []NodeResult, do func(i int) bool,
	fn func(ctx context.Context, nd *modernproto.Node, r *NodeResult) error) int {
	nctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	call := func(i int) {
		r := &res[i]
		r.Err, r.HolderTTL = nil, 0 // a retried round must not show an earlier round's answer
		if err := fn(nctx, &l.nodes[i], r); err != nil {
			r.Status, r.HolderTTL, r.Err = Failed, 0, err
			if ctx.Err() == nil && (nctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
				if errors.Is(err, lockbridge.ErrUnknownOutcome) { // it was on the wire
					r.Err = unknownTimeout{fmt.Errorf("%w after %v", ErrNodeTimeout, timeout)}
				} else {
					r.Err = fmt.Errorf("%w after %v", ErrNodeTimeout, timeout)
				}
			}
		}
	}
	var wg sync.WaitGroup
	last := -1 // run in this goroutine, after starting the others
	for i := range l.nodes {
		if do != nil && !do(i) {
			continue
		}
		if last >= 0 {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				call(i)
			}(last)
		}
		last = i
	}
	if last >= 0 {
		call(last)
	}
	wg.Wait()
	got := 0
	for i := range res {
		if res[i].Status == OK {
			got++
		}
	}
	return got
}
