package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
)

var _ lockbridge.Lock = (*Lock)(nil)

// Lock is one held Redlock lock, as returned (behind lockbridge.Lock) by
// Locker.TryLock and Locker.Lock. Its methods are safe for concurrent use,
// and safe on a nil *Lock (which reports ErrNotHeld).
type Lock struct {
	locker *Locker
	names  modernproto.Names
	token  string
	arg    any                    // token, boxed once for the scripts' ARGV
	timing atomic.Pointer[timing] // of the last acquire or refresh
	lease  lease.Lease            // ends at the validity end

	mu       sync.Mutex   // serialises Unlock and Refresh
	rounds   lease.Rounds // serialises refresh rounds: Refresh and the auto-refresh
	released atomic.Bool  // Unlock reached a verdict
	unlocked []NodeResult // what Unlock's rounds so far got from each node; under mu
}

// valid checks a call's receiver and context: a nil or zero Lock (not from
// a Locker), or a nil ctx, is an error wrapping lockbridge.ErrInvalid.
func (lk *Lock) valid(ctx context.Context) error {
	switch {
	case lk == nil:
		return errNilLockCall
	case lk.locker == nil || lk.timing.Load() == nil:
		return errZeroLock
	}
	return check.Context("redlock", ctx)
}

// life is the lock's lease; nil for a nil Lock.
func (lk *Lock) life() *lease.Lease {
	return lease.Field(lk, func(l *Lock) *lease.Lease { return &l.lease })
}

// Key returns the key the caller named.
func (lk *Lock) Key() string { return lease.Field(lk, func(l *Lock) string { return l.names.Key }) }

// Token returns the value this holder wrote to the key on every node
// (printable: base64url unless a WithTokenFunc says otherwise).
func (lk *Lock) Token() string { return lease.Field(lk, func(l *Lock) string { return l.token }) }

// ExpiresAt is the end of the lock's validity: when the last successful
// acquire or refresh round was sent, plus its ttl, minus the drift
// allowance. Before then no other Redlock client can have a majority, as
// long as the clocks drift less than the allowance; the keys on the nodes
// expire a little later.
func (lk *Lock) ExpiresAt() time.Time { return lk.life().ExpiresAt() }

// Done is closed once the lock is released by Unlock or known lost: a
// refresh (by hand or automatic) found it gone or taken on so many nodes that
// no majority can be ours, or at the give-up point, a twelfth of the lease
// before ExpiresAt, with or without auto-refresh.
func (lk *Lock) Done() <-chan struct{} { return lk.life().Done() }

// Err is nil while the lock is held and after a clean Unlock. Once the lock
// is known lost — or an Unlock failed — it returns an error wrapping
// lockbridge.ErrLost and the cause (a *QuorumError when nodes answered, or
// the last round's error).
func (lk *Lock) Err() error { return lk.life().ErrOr(errNilLock) }

// Refresh extends the lease to ttl from now (at least 1 ms; sub-millisecond
// parts are dropped) on every node where the lock is still ours, in
// parallel, each node bounded by the node timeout. It succeeds when a
// majority refreshed and validity is left (ttl − the round's time − the
// drift allowance); nodes where the key had expired (a node that restarted
// empty, say) are then given it back, best effort, so they rejoin the
// quorum. Otherwise it returns a *QuorumError. When that says the lock is
// no longer ours — too many nodes answered Taken or Expired for even the
// failed ones to make a majority — it wraps lockbridge.ErrNotHeld and the
// lock counts as lost: Done is closed and Err wraps lockbridge.ErrLost.
// When failed nodes leave it undecided, the lock stands until ExpiresAt and
// Refresh may be tried again. A lock already released, or already known
// lost, is not refreshed: the error wraps ErrNotHeld. With WithAutoRefresh
// the later refreshes use the new ttl.
func (lk *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := lk.valid(ctx); err != nil {
		return err
	}
	t, err := lk.locker.timing(ttl)
	if err != nil {
		return err
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.released.Load() {
		return errReleased
	}
	if lk.lease.Ended() {
		return fmt.Errorf("redlock: refresh of a lost lock: %w: %w", lockbridge.ErrNotHeld, lk.lease.Err())
	}
	return lk.refresh(ctx, t)
}

// autoRefresh is the lease's RefreshFunc: refresh with the current ttl.
func (lk *Lock) autoRefresh(ctx context.Context) error {
	return lk.refresh(ctx, nil) // the ttl read in the turn: a Refresh just done wins
}

// refresh runs a refresh round and records the outcome in the lease. It is
// the auto-refresh's callback too (t nil), which never waits behind a
// Refresh by hand (lease.Rounds). The lease is shortened before the round
// (lease.Sending): a shorter ttl may take effect on the nodes, all or some,
// whether or not their replies come.
func (lk *Lock) refresh(ctx context.Context, t *timing) error {
	if err := lk.rounds.Enter(t == nil); err != nil {
		return err
	}
	defer lk.rounds.Leave()
	if t == nil {
		t = lk.timing.Load()
	}
	l := lk.locker
	res := l.results()
	start := time.Now()
	lk.lease.Sending(start, t.ttl-t.drift)
	got := l.round(ctx, t.nodeTimeout, res, nil, func(ctx context.Context, nd *modernproto.Node, r *NodeResult) error {
		code, err := nd.Refresh(ctx, &lk.names, lk.arg, t.ttl)
		r.Status = status(code)
		return err
	})
	validity := t.validity(start)
	for i := range res {
		if res[i].Err != nil && (errors.Is(res[i].Err, lockbridge.ErrUnknownOutcome) || errors.Is(res[i].Err,
			ErrNodeTimeout)) {
			// That node may still run it later, after a grant confirmed
			// meanwhile: no grant counts for more than this ttl from now on.
			lk.lease.Unsure(t.ttl - t.drift)
		}
	}
	if got >= l.quorum && validity > 0 {
		lk.timing.Store(t)
		if err := lk.lease.Extend(start.Add(t.ttl-t.drift), t.ttl-t.drift); err != nil {
			return err
		}
		if got < len(res) && ctx.Err() == nil {
			lk.rejoin(ctx, t, res)
		}
		return nil
	}
	qe := &QuorumError{op: opRefresh, Key: lk.names.Key, Need: l.quorum, Got: got, Nodes: res}
	if got >= l.quorum {
		qe.validity = validity
	}
	if qe.lost() {
		lk.lease.Lose(qe)
	}
	return qe
}

// rejoin gives the lock back to the nodes where a refresh found it expired,
// while a majority holds it: SET NX PX with our token, as an acquire, best
// effort. A majority holding it shows nobody else can have had the lock
// meanwhile, so this is as safe as acquiring those nodes afresh; it keeps a
// node that restarted empty from leaving the lock one failure nearer loss.
func (lk *Lock) rejoin(ctx context.Context, t *timing, refreshed []NodeResult) {
	expired := func(i int) bool { return refreshed[i].Status == Expired }
	some := false
	for i := range refreshed {
		some = some || expired(i)
	}
	if !some {
		return
	}
	l := lk.locker
	l.round(ctx, t.nodeTimeout, l.results(), expired, func(ctx context.Context, nd *modernproto.Node,
		r *NodeResult) error {
		_, _, err := nd.Acquire(ctx, &lk.names, lk.arg, t.ttl)
		return err
	})
}

// Unlock releases the lock on every node, in parallel, each bounded by the
// node timeout: the release script deletes the key where it still holds our
// token (and publishes the release there, as modern's does). It first stops
// the auto-refresh and waits for it, so no refresh is sent after Unlock.
//
// When a majority released, Unlock returns nil, even if some nodes failed:
// their keys expire by themselves. When too many nodes answered Taken or
// Expired for the lock to have been ours, it returns a *QuorumError
// wrapping lockbridge.ErrNotHeld (the lock was lost before, perhaps without
// anyone noticing), and Err wraps lockbridge.ErrLost. When failed nodes
// leave it undecided, Unlock returns the *QuorumError (wrapping the nodes'
// errors, not ErrNotHeld) and the lock ends locally all the same (Done is
// closed, Err wraps ErrLost): without refreshes it expires by itself at
// ExpiresAt. Calling Unlock again then retries the nodes that did not
// release. After a verdict, a second Unlock returns an error wrapping
// ErrNotHeld without asking Redis.
func (lk *Lock) Unlock(ctx context.Context) error {
	if lk == nil {
		return errNilLock
	}
	if err := lk.valid(ctx); err != nil {
		return err
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.released.Load() {
		return errReleased
	}
	lk.lease.StopRefresh()
	l := lk.locker
	if lk.unlocked == nil {
		lk.unlocked = l.results()
	}
	res := lk.unlocked
	t := lk.timing.Load()
	unknown := make([]bool, len(res)) // an earlier round's release got no reply there
	for i := range res {
		unknown[i] = res[i].Status == Failed && errors.Is(res[i].Err, lockbridge.ErrUnknownOutcome)
	}
	got := l.round(ctx, t.nodeTimeout, res, func(i int) bool { return res[i].Status != OK }, func(ctx context.Context,
		nd *modernproto.Node, r *NodeResult) error {
		code, err := nd.Release(ctx, &lk.names, lk.arg)
		r.Status = status(code)
		if err == nil && unknown[r.Index] {
			// Asking again after a lost reply: no key may count as
			// released; another holder's key cannot tell our release that
			// ran from our key lost before it.
			switch r.Status {
			case Expired:
				r.Status = OK
			case Taken:
				return lease.UnknownRelease("redlock", lk.names.Key)
			}
		}
		return err
	})
	if got >= l.quorum {
		lk.released.Store(true)
		lk.lease.End(nil)
		return nil
	}
	qe := &QuorumError{op: opUnlock, Key: lk.names.Key, Need: l.quorum, Got: got, Nodes: append([]NodeResult(nil), res...)}
	if qe.lost() {
		lk.released.Store(true)
		lk.lease.Lose(qe)
		return qe
	}
	lk.lease.Lose(fmt.Errorf("unlock failed: %w", qe))
	return qe
}

// status maps a script's reply code to a node's answer.
func status(code int64) Status {
	switch code {
	case modernproto.Ours:
		return OK
	case modernproto.Taken:
		return Taken
	}
	return Expired
}
