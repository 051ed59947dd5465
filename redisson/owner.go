package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/retry"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

var _ lockbridge.Locker = (*Owner)(nil)

const (
	// undoTimeout bounds the best-effort release after an acquire whose
	// context ended while it was on the wire.
	undoTimeout = 250 * time.Millisecond
	// undoRecheck is how long that release waits before looking again, for
	// an acquire still on its way when the first look found no field.
	undoRecheck = 2 * time.Millisecond
)

// Owner is one holder identity, what a Java thread is to Redisson: its
// field in a lock's hash is "<client id>:<owner id>" and its holds are
// reentrant — TryLock or Lock on a lock it holds succeed at once and add one
// to the count in the hash, and each returned *Lock must be unlocked; the
// lock is free when the last is. Make owners with Locker.NewOwner and use
// one where Java would use one thread: for one task, holding its locks
// across calls. It is safe for concurrent use: its attempts on one lock run
// one at a time (a waiting Lock call lets others in between its attempts),
// so an attempt whose outcome is unknown can settle it by the owner's
// field; it can do so only while the owner has no other hold of that lock
// (see TryLock).
type Owner struct {
	l     *Locker
	id    int64
	field string

	mu     sync.Mutex
	holds  map[string]map[*Lock]struct{} // the holds of this Owner value not yet unlocked, by key
	gens   map[string]uint64             // by key: acquires that may have made the field anew
	trying map[string]chan struct{}      // the attempt on key under way, closed when it is settled
	doubts map[string]struct{}           // keys whose hash may hold a count of ours no live hold knows of
	// By key, the writes of ours whose reply never came, which may still
	// land at any later time — on a hold taken after them, as all the
	// owner's holds of a key share its field:
	ceilings  map[string]time.Duration // the shortest lease one may set on the lock (Owner.unsure)
	releasing map[string]int           // how many releases may still take a count (Owner.releaseUnknown)
}

// Field returns the owner's field in a lock's hash: "<client id>:<id>".
func (o *Owner) Field() string {
	if o == nil {
		return ""
	}
	return o.field
}

// prepare validates a call and derives the lock's names.
func (o *Owner) prepare(ctx context.Context, key string, ttl time.Duration) (names, time.Duration, error) {
	if o == nil || o.l == nil {
		return names{}, 0, errNilOwner
	}
	n, err := o.l.prepare(ctx, key)
	if err != nil {
		return names{}, 0, err
	}
	if err := check.TTL("redisson", ttl, time.Millisecond); err != nil {
		return names{}, 0, err
	}
	// PEXPIRE takes whole milliseconds: the local lease must not outlast the server's.
	return n, ttl.Truncate(time.Millisecond), nil
}

// TryLock makes one attempt to take the lock key for ttl (at least 1 ms;
// sub-millisecond parts are dropped) with Redisson's acquire: it succeeds
// when the lock is free or already this owner's (a reentrant hold; the
// lease is then set to ttl for the whole lock, or to what the owner's other
// holds have left when that is longer). When another owner holds
// it, the error is a *lockbridge.NotObtainedError with the holder's remaining lease.
// The Lock returned is a *Lock.
//
// When the reply is lost (the error would wrap lockbridge.ErrUnknownOutcome)
// and this Owner holds no other hold of key, the attempt reads the field
// back (HEXISTS, a read): present, the acquire ran and the hold is
// returned; absent, it did not — unless the Owner ever left, or may have
// left, a count in the hash of key that no hold knows of (a hold lost or
// forgotten without a release, a count an unlock left, an acquire of
// unknown outcome, which may land at any later time): then the field shows
// nothing, and the error wraps lockbridge.ErrUnknownOutcome for as long as
// this Owner lives. With another hold the count cannot tell,
// and the error wraps lockbridge.ErrUnknownOutcome: a hold the acquire may
// have added stays in the count until the lease ends after the last known
// hold is unlocked. When ctx ends during the attempt the error wraps
// lockbridge.ErrNotObtained and ctx.Err(), and a hold the attempt may have
// taken is released at once on a detached context (best effort, 250 ms) —
// again only without another hold of key.
//
// After an Unlock of a hold of key whose reply never came, TryLock and Lock
// on key send nothing and return an error wrapping
// lockbridge.ErrUnknownOutcome until that Unlock, called again, gets the
// latch's answer: the first unlock may still land, and would take the count
// of a hold taken now. After an acquire or renewal of key whose reply never
// came, later holds of key count no grant for more than its lease.
func (o *Owner) TryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, o.telemetry(), telemetry.OpTryLock, o.tryLock, key, ttl)
}

// telemetry is the Locker's, nil for a nil or zero Owner.
func (o *Owner) telemetry() *telemetry.T {
	if o == nil || o.l == nil {
		return nil
	}
	return o.l.tel
}

func (o *Owner) tryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	n, ttl, err := o.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	lk, _, err := o.try(ctx, &n, ttl, 0)
	if err != nil {
		o.l.explain(ctx, &n, o.field, err)
		return nil, err
	}
	return lk, nil
}

// Lock takes the lock key for ttl, waiting while another owner holds it,
// until it succeeds, the backoff gives up (the error wraps
// lockbridge.ErrNotObtained), Redis fails (that error, wrapped), or ctx ends
// (the error wraps lockbridge.ErrNotObtained and ctx.Err()). The Lock
// returned is a *Lock.
//
// Waiting is Redisson's: after a failed attempt the waiter subscribes to
// the lock's channel (redisson_lock__channel:{key}), and once the server has
// confirmed the subscription attempts again, so no unlock in between is
// missed. It then sleeps until an unlock message (Java's or Go's) wakes it,
// or for its backoff, but never past the holder's remaining lease (the PTTL
// the failed attempt returned), and attempts again. When subscribing fails
// it just waits by backoff and lease.
func (o *Owner) Lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, o.telemetry(), telemetry.OpLock, o.lock, key, ttl)
}

func (o *Owner) lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	n, ttl, err := o.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	wait := o.l.waitFor(ctx) // a fair Locker queues us
	w := o.l.waiter(&n, o.field)
	defer w.close()
	var last *lockbridge.NotObtainedError // the last refusal, to explain a fair lock's wait that ended
	lk, err := retry.Loop(ctx, o.l.tel, o.l.cfg.backoff, w.wake, func(ctx context.Context) (*Lock, time.Duration, error) {
		lk, left, err := o.try(ctx, &n, ttl, wait)
		if w.subscribe(ctx, err) {
			lk, left, err = o.try(ctx, &n, ttl, wait)
		}
		if ne := (*lockbridge.NotObtainedError)(nil); errors.As(err, &ne) {
			last = ne
		}
		return lk, left, err
	})
	if err != nil {
		o.l.leave(ctx, &n, o.field, wait)
		if o.l.cfg.fair {
			err = o.explainWait(ctx, &n, err, last)
		}
		return nil, err
	}
	return lk, nil
}

// explainWait is the error of a fair Lock call that gave up, err, with
// what held it: the holder's lease, or the queued waiter ahead (see
// Locker.explain). The error texts are made when wrapped, so those that
// wrap the refusal are made again.
func (o *Owner) explainWait(ctx context.Context, n *names, err error, last *lockbridge.NotObtainedError) error {
	var ne *lockbridge.NotObtainedError
	cerr := ctx.Err()
	switch {
	case errors.Is(err, lockbridge.ErrUnknownOutcome) && !errors.Is(err, lockbridge.ErrNotObtained):
		return err // may hold: no refusal to explain
	case errors.As(err, &ne):
		o.l.explain(ctx, n, o.field, ne)
		if err != error(ne) && cerr != nil {
			return fmt.Errorf("%w: %w", ne, cerr) // as the retry loop wraps it
		}
	case last != nil && cerr != nil:
		// ctx ended during an attempt: the last refusal says what held it.
		o.l.explain(ctx, n, o.field, last)
		return fmt.Errorf("%w (%w)", err, last)
	}
	return err
}

// HoldCount returns how many holds this owner has on the lock key, as the
// hash counts them (Redisson's getHoldCount: HGET key field; 0 when none).
func (o *Owner) HoldCount(ctx context.Context, key string) (int64, error) {
	if o == nil || o.l == nil {
		return 0, errNilOwner
	}
	if _, err := o.l.prepare(ctx, key); err != nil {
		return 0, err
	}
	r, err := o.l.c.Do(ctx, "HGET", key, o.field)
	if err != nil {
		return 0, fmt.Errorf("redisson: hold count of %q: %w", key, err)
	}
	if r == nil {
		return 0, nil
	}
	c, err := strconv.ParseInt(fmt.Sprint(r), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redisson: hold count of %q: %w", key, err)
	}
	return c, nil
}

// live reports how many holds of key this Owner value has not unlocked.
func (o *Owner) live(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.holds[key])
}

// add records lk, a hold of key whose acquire was sent at start, and sets
// its generation. An acquire sent while another hold of the owner's lease
// still ran by our clock (and was not known lost) was a re-entry: the
// server's lease ends no sooner.
// Any other acquire may have made the field anew after it vanished, and
// starts a generation: a hold of an earlier one whose lease has run out
// may no longer have a count in the field (see Lock.unlock).
func (o *Owner) add(lk *Lock, start time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := lk.names.key
	fresh := true
	for h := range o.holds[key] {
		if !h.lease.Ended() && start.Before(h.lease.ExpiresAt()) {
			fresh = false
			break
		}
	}
	if fresh {
		o.gens[key]++
	}
	lk.gen = o.gens[key]
	if o.holds[key] == nil {
		o.holds[key] = map[*Lock]struct{}{}
	}
	o.holds[key][lk] = struct{}{}
}

// keep is how long the lock key must live from now for the leases of the
// owner's other live holds (all but except) to hold: the longest time they
// have left by our clock, rounded up to the millisecond; 0 when none. Every
// acquire, partial unlock and renewal sets the whole lock's lease, so each
// sends at least this: a re-entry with a short ttl must not end the lock
// under an outer hold whose lease still runs.
func (o *Owner) keep(key string, except *Lock) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	var d time.Duration
	for h := range o.holds[key] {
		if h == except || h.lease.Ended() {
			continue
		}
		d = max(d, h.lease.ExpiresAt().Sub(now))
	}
	if r := d % time.Millisecond; r != 0 {
		d += time.Millisecond - r
	}
	return d
}

// remove forgets lk, unlocked.
func (o *Owner) remove(lk *Lock) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := lk.names.key
	delete(o.holds[key], lk)
	if len(o.holds[key]) == 0 {
		delete(o.holds, key)
	}
}

// renewedSince reports whether an acquire of a later generation than gen
// may have made the field of key anew.
func (o *Owner) renewedSince(key string, gen uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gens[key] != gen
}

// attempt waits until no other attempt of this Owner on key is under way
// and marks one under way; the function returned ends it. An attempt whose
// outcome is unknown settles it by the owner's field (reading it back, or
// releasing it), which is its own only while no other attempt of the owner
// on key can add to it.
func (o *Owner) attempt(ctx context.Context, key string) (func(), error) {
	for {
		if end, ok := o.tryAttempt(key); ok {
			return end, nil
		}
		o.mu.Lock()
		busy, ok := o.trying[key]
		o.mu.Unlock()
		if !ok {
			continue
		}
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// tryAttempt is attempt without waiting: false when another is under way.
func (o *Owner) tryAttempt(key string) (func(), bool) {
	o.mu.Lock()
	if _, busy := o.trying[key]; busy {
		o.mu.Unlock()
		return nil, false
	}
	mine := make(chan struct{})
	o.trying[key] = mine
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		delete(o.trying, key)
		o.mu.Unlock()
		close(mine)
	}, true
}

// doubt records that the hash of key may hold, now or at any later time, a
// count of the owner's that none of its live holds accounts for: a hold
// forgotten without a release (lost, or its unlock's outcome unknown), a
// count another unlock left, an acquire whose outcome is unknown (which may
// still land). From then on the owner's field shows nothing about an
// acquire whose reply was lost: no time bound is guessed for a write held
// up in the network.
func (o *Owner) doubt(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.doubts[key] = struct{}{}
}

// doubted reports whether the owner's field of key may hold a count none
// of its live holds accounts for (see doubt).
func (o *Owner) doubted(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.doubts[key]
	return ok
}

// unsure tells every live hold of key that a write setting the lock's
// lease to d may still run on the server at any later time (its reply
// never came): no grant of theirs counts for more than d from then on.
// Holds taken later are told too (Owner.hold): the write may land on them,
// since they share the field, and no time bound is guessed for it.
func (o *Owner) unsure(key string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for h := range o.holds[key] {
		h.lease.Unsure(d)
	}
	if c, ok := o.ceilings[key]; d > 0 && (!ok || d < c) {
		o.ceilings[key] = d
	}
}

// ceiling is the shortest lease a write of ours on key whose reply never
// came may still set (0: none).
func (o *Owner) ceiling(key string) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ceilings[key]
}

// releaseUnknown records (by +1) a release of ours on key whose reply never
// came, sent for the first time — it may still land at any later time and
// take a count of the field, which may then be a later hold's, its only one
// —, or (by −1) one that the unlock latch has since shown to have run.
func (o *Owner) releaseUnknown(key string, by int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.releasing[key] += by
	if o.releasing[key] <= 0 {
		delete(o.releasing, key)
	}
}

// releasePending reports whether a release of ours on key may still land.
func (o *Owner) releasePending(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.releasing[key] > 0
}

// try makes one attempt and, when it succeeds, builds the Lock. When the
// lock is held by another owner it also returns the holder's remaining
// lease (0 if unknown). wait is a fair Lock call's (0: never queue).
func (o *Owner) try(ctx context.Context, n *names, ttl, wait time.Duration) (*Lock, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("redisson: lock %q: %w: %w", n.key, lockbridge.ErrNotObtained, err)
	}
	end, err := o.attempt(ctx, n.key)
	if err != nil {
		return nil, 0, fmt.Errorf("redisson: lock %q: %w: %w", n.key, lockbridge.ErrNotObtained, err)
	}
	defer end()
	if o.releasePending(n.key) {
		return nil, 0, fmt.Errorf("redisson: lock %q: nothing sent: %w: an unlock of this owner's whose reply never "+
			"came may still run on the server, and would take the count of a hold taken now (ask that Unlock again "+
			"to settle it, or use another Owner)", n.key, lockbridge.ErrUnknownOutcome)
	}
	alone := o.live(n.key) == 0
	sent := max(ttl, o.keep(n.key, nil)) // the whole lock's lease: never below another hold's
	start := time.Now()                  // after keep: start+sent covers every hold's lease
	held, holder, fence, err := o.l.acquire(ctx, n, o.field, sent, wait)
	unknown := err != nil && !held && (errors.Is(err, lockbridge.ErrUnknownOutcome) || ctx.Err() != nil ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	if unknown {
		// An acquire that may still run later sets the lock's lease to
		// sent from then, under the other holds and the later ones.
		o.unsure(n.key, sent)
	}
	switch {
	case held:
		return o.hold(ctx, n, start, ttl, fence), 0, nil
	case err == nil:
		// Wait no longer than the holder's lease; unknown (0) or none
		// (negative): the backoff decides.
		return nil, max(holder, 0), &lockbridge.NotObtainedError{Pkg: "redisson", Key: n.key, HolderTTL: holder}
	case !unknown:
		return nil, 0, fmt.Errorf("redisson: lock %q: %w", n.key, err)
	}
	lk, err := o.settle(ctx, n, start, ttl, alone, err)
	if lk == nil {
		// The acquire may have left a count no hold knows of, or still
		// run and leave one: the undo is best effort.
		o.doubt(n.key)
	}
	return lk, 0, err
}

// settle settles an acquire sent at start whose context ended with it on
// the wire, or whose reply never came (err): it returns the hold when
// reading the owner's field back shows the acquire ran, else the error.
// alone says the owner had no other hold of the lock when it was sent.
func (o *Owner) settle(ctx context.Context, n *names, start time.Time, ttl time.Duration, alone bool,
	err error) (*Lock, error) {
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		if !alone {
			return nil, fmt.Errorf("redisson: lock %q: %w: the re-entry may have been counted: %w", n.key,
				lockbridge.ErrUnknownOutcome, err)
		}
		// Only an undo that took our count back settles it (the acquire
		// ran, and runs once); one that found no field of ours leaves it
		// open: the acquire may still be on its way and run after it.
		if !errors.Is(err, lockbridge.ErrUnknownOutcome) {
			return nil, fmt.Errorf("redisson: lock %q: %w: %w", n.key, lockbridge.ErrNotObtained, err)
		}
		if o.undo(ctx, n, ttl) {
			cause := ctx.Err()
			if cause == nil {
				cause = context.DeadlineExceeded
				if errors.Is(err, context.Canceled) {
					cause = context.Canceled
				}
			}
			return nil, fmt.Errorf("redisson: lock %q: %w: %w (the acquire ran, and was undone: %v)", n.key,
				lockbridge.ErrNotObtained, cause, err)
		}
		return nil, fmt.Errorf("redisson: lock %q: the context ended with the acquire on its way, and the unlock that "+
			"undoes it found no count of ours: the acquire may still run: %w", n.key, err)
	case !alone:
		return nil, fmt.Errorf("redisson: lock %q: the re-entry may have been counted: %w", n.key, err)
	case o.doubted(n.key):
		// A count of ours that no hold knows of may be in the hash:
		// finding the field shows nothing about this acquire.
		o.undo(ctx, n, ttl)
		return nil, fmt.Errorf("redisson: lock %q: the hash may still hold a count of this owner's that no hold "+
			"knows of (a hold lost or forgotten, an acquire of unknown outcome), so finding the field would not "+
			"show that this acquire ran: %w", n.key, err)
	}
	// The reply was lost. The field is ours alone, we had no hold, and no
	// count of ours lingers: its presence settles the outcome (a read, not
	// a resend). While we hold it no one else acquires, so a fenced lock's
	// counter still holds the token our acquire got.
	held, fence, rerr := o.readBack(ctx, n)
	switch {
	case rerr != nil:
		o.undo(ctx, n, ttl)
		return nil, fmt.Errorf("redisson: lock %q: %w (reading the field back: %v)", n.key, err, rerr)
	case !held:
		// Not settled: the acquire may still be on its way and run after
		// the read (see modern's try).
		o.undo(ctx, n, ttl)
		return nil, fmt.Errorf("redisson: lock %q: the hash has no field of ours yet, and the acquire may still run: %w",
			n.key, err)
	}
	return o.hold(ctx, n, start, ttl, fence), nil
}

// readBack reports whether the owner's field is in the lock's hash and,
// for a fenced Locker, the token counter's value. The counter is read
// between two looks at the field: present at both, the field was there all
// along (no other attempt of this owner on the lock is under way to make it
// again), so no one else acquired — and INCRed — in between, and the value
// is our acquire's. Gone at the second look, the lease ran out while we
// read, and the value may be the next holder's: the hold is not returned.
func (o *Owner) readBack(ctx context.Context, n *names) (bool, int64, error) {
	h, err := o.l.c.Do(ctx, "HEXISTS", n.key, o.field)
	if err != nil || h != int64(1) || !o.l.cfg.fencing {
		return h == int64(1), 0, err
	}
	v, ok, err := o.l.c.Get(ctx, n.token)
	if err != nil || !ok {
		return false, 0, fmt.Errorf("token counter %q: %v (present: %v)", n.token, err, ok)
	}
	fence, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false, 0, err
	}
	if h, err = o.l.c.Do(ctx, "HEXISTS", n.key, o.field); err != nil || h != int64(1) {
		return false, 0, err
	}
	return true, fence, nil
}

// hold builds the Lock of a successful acquire sent at start.
func (o *Owner) hold(ctx context.Context, n *names, start time.Time, ttl time.Duration, fence int64) *Lock {
	lk := &Lock{owner: o, names: *n, fence: fence}
	lk.lease.Init("redisson", start, ttl)
	if c := o.ceiling(n.key); c > 0 {
		// A write of ours whose reply never came may land on this hold
		// and set the lock's lease to c from then: no grant counts for more.
		lk.lease.Sending(start, c)
		lk.lease.Unsure(c)
	}
	o.add(lk, start)
	if o.l.cfg.watchdog {
		lk.lease.Observe(o.l.tel, n.key)
		lk.lease.AutoRefresh(ctx, lk.watchdog)
	}
	return lk
}

// undo releases, best effort, the hold an acquire whose context ended may
// have taken, for an owner with no other hold of the lock. A first look
// that finds no field is repeated once, shortly after, for an acquire that
// was overtaken. It reports whether it took a count of ours back: only
// that settles the acquire.
func (o *Owner) undo(ctx context.Context, n *names, ttl time.Duration) (released bool) {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	for look := 0; look < 2; look++ {
		if look > 0 {
			select {
			case <-time.After(undoRecheck):
			case <-uctx.Done():
				return
			}
		}
		id, err := newRequestID()
		if err != nil {
			return
		}
		r, err := o.l.release(uctx, n, o.field, ttl, id, false)
		if err != nil && (errors.Is(err, lockbridge.ErrUnknownOutcome) || uctx.Err() != nil) {
			o.releaseUnknown(n.key, 1)
		}
		if err != nil || r != nil {
			// A count of ours taken back (with WithFair, releaseDone also
			// answers a key that was gone: that shows nothing).
			return err == nil && (r == int64(releaseKept) || (r == int64(releaseDone) && !o.l.cfg.fair))
		}
	}
	return false
}
