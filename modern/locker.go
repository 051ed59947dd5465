package modern

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/runtime/queue"
	"github.com/lockbridge/lockbridge/internal/runtime/retry"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

var _ lockbridge.Locker = (*Locker)(nil)

// FenceSuffix is what the fence counter's name adds to the lock key (inside
// the hash-tag form: "{key}:fence" for an untagged key).
const FenceSuffix = modernproto.FenceSuffix

// undoRecheck is how long the release of an acquire whose context ended
// (bounded by lease.UndoTimeout) waits before looking a second time, for a
// SET still on its way when the first look found no key.
const undoRecheck = 2 * time.Millisecond

// Locker takes modern locks through one driver.Client. Build it with New.
// It is safe for concurrent use and needs no Close: the
// release-notification subscription it shares among its waiters (with its
// reader goroutine) is opened when a Lock call first has to wait and closed
// WithNotifyLinger (1 s by default) after the last waiting Lock call
// returned; Close ends it at once.
type Locker struct {
	cfg  modernproto.Config
	err  error            // invalid options, returned by every TryLock and Lock
	node modernproto.Node // the client, speaking the protocol
	hub  *notify.Hub
	// waiters orders the Lock calls waiting on a key: one attempts at a time.
	waiters queue.Queue
	// polite defers to pollers (WithPollers); nil off.
	polite *retry.Courtesy
	tel    *telemetry.T
}

// New returns a Locker on c. Invalid options (or a nil c) are not reported
// here but by every TryLock and Lock, with an error wrapping
// lockbridge.ErrInvalid.
func New(c driver.Client, opts ...Option) *Locker {
	l := &Locker{cfg: modernproto.NewConfig(opts)}
	l.tel = l.cfg.Errs.Reporter()
	if c == nil {
		l.cfg.Errs.Invalid("nil driver.Client")
	} else {
		l.node = modernproto.NewNode("modern", c)
		l.hub = notify.New(c, notify.Logger(l.tel.Log()), notify.Linger(l.cfg.Linger))
	}
	l.err = l.cfg.Errs.Err()
	if l.cfg.Poll > 0 {
		l.polite = &retry.Courtesy{Poll: l.cfg.Poll}
	}
	return l
}

// Close ends the Locker's release-notification subscription, if one is
// open or lingers, and waits for its goroutines. Lock calls waiting wake
// and go on polling, as do later ones (TryLock is unchanged); locks taken
// stay held, and their Unlock still publishes. Safe to call more than once,
// and on a Locker New reported invalid.
func (l *Locker) Close() error {
	if l == nil || l.hub == nil {
		return nil
	}
	return l.hub.Close()
}

// names are the Redis names of one lock, and the KEYS of its scripts.
type names = modernproto.Names

// prepare validates a call's arguments and derives the lock's names.
func (l *Locker) prepare(ctx context.Context, key string, ttl time.Duration) (names, time.Duration, error) {
	if err := check.Context("modern", ctx); err != nil {
		return names{}, 0, err
	}
	if l == nil || (l.err == nil && l.hub == nil) {
		return names{}, 0, lockopt.Zero("modern")
	}
	if l.err != nil {
		return names{}, 0, l.err
	}
	if err := check.KeyTTL("modern", key, ttl, time.Millisecond); err != nil {
		return names{}, 0, err
	}
	n, ok := modernproto.UnboundNames(key, l.cfg.Fencing) // try binds its copy in the Lock
	if !ok {
		return names{}, 0, fmt.Errorf("modern: %w: key %q cannot have a fence counter in its hash slot",
			lockbridge.ErrInvalid, key)
	}
	// PX takes whole milliseconds: the local lease must not outlast the server's.
	return n, ttl.Truncate(time.Millisecond), nil
}

// TryLock makes one attempt to take the lock key for ttl (at least 1 ms;
// sub-millisecond parts are dropped). When another holder has it, the error
// is a *lockbridge.NotObtainedError (wrapping lockbridge.ErrNotObtained) that says how
// long the holder has left. The Lock returned is a *Lock. A Redis error is
// returned wrapped, never as ErrNotObtained; when ctx ends during the
// attempt, the error wraps both lockbridge.ErrNotObtained and ctx.Err(), and
// a lock the attempt may have taken on the server is released (see Lock) —
// unless that release found no token of ours while the attempt may have
// been sent: it may still be on its way and take the lock after the
// release (held by no one, to the end of its ttl), so the error then wraps
// lockbridge.ErrUnknownOutcome and ctx.Err() instead, and names the token.
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpTryLock,
		l.tryLock, key, ttl)
}

func (l *Locker) tryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	n, ttl, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	lk, _, err := l.try(ctx, &n, ttl, false)
	if err != nil {
		return nil, err
	}
	return lk, nil
}

// Lock takes the lock key for ttl, waiting while another holder has it,
// until it succeeds, the backoff gives up (then the error wraps
// lockbridge.ErrNotObtained), Redis fails (that error, wrapped), or ctx ends:
// then the error wraps both lockbridge.ErrNotObtained and ctx.Err(). The Lock
// returned is a *Lock.
//
// Waiting: after a failed attempt Lock sleeps for its backoff's delay, but
// never longer than the holder's remaining lease (each failed attempt reads
// it in the same round trip), and — with notifications on, the default — it
// wakes as soon as the holder's release is published. The first wait
// subscribes to the key's release channel and confirms the subscription
// before attempting again, so no release is missed (a channel still
// subscribed, WithNotifyLinger, needs neither); if subscribing fails, Lock
// just polls. With WithPollers it waits as a poller instead, and release
// notices do not wake it. After a notice, waiters of different Lockers that
// have raced for the key before take turns: see the package documentation,
// Across processes.
//
// Order: the Lock calls of this Locker waiting on the same key take turns,
// first come first served. Only the first of them attempts; it is woken at
// once when a lock of this Locker on the key is released, and the next one
// starts attempting as soon as it has the lock or gives up. A call waiting
// for its turn sends nothing to Redis; its waits still count for the
// backoff. The turn is no lock: the first in line must still take the lock
// on the server, where other Lockers' callers and TryLock compete with it
// (see the package documentation, Waiting).
//
// A context that ends while an attempt is on the wire leaves no lock
// behind: the attempt's token is released at once, on a detached context, for
// up to 250 ms. Should Redis execute the SET only after that, the key holds a
// token no Lock value knows: nobody refreshes it, and it expires after ttl.
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpLock, l.lock,
		key, ttl)
}

func (l *Locker) lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	n, ttl, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	w := &waiting{l: l, n: n, ttl: ttl, start: time.Now()}
	if _, again := l.cfg.Backoff.Delay(1); again {
		// In line behind this Locker's earlier waiters on the key: only the
		// head attempts, woken by a local release or a release notice.
		w.wake = make(chan struct{}, 1)
		w.turn = l.waiters.Join(n.Key, w.wake)
		defer w.leave()
	}
	w.notices = w.wake != nil && l.cfg.Notify && n.Channel != ""
	if w.subscribe = w.notices; w.subscribe {
		// The key was waited for here a moment ago (its channel is
		// subscribed): an attempt is expected to find it taken.
		w.held = l.hub.Since(n.Channel).Covers()
		w.line = min(l.hub.Line(n.Channel), maxLine)
		w.contended = l.hub.Contended(n.Channel, contendedFor)
	}
	lk, err := retry.LoopDelayed(ctx, l.tel, l.polite.Backoff(l.cfg.Backoff), w.wake, w.attempt, &w.delayed)
	if err != nil {
		return nil, err
	}
	w.got = lk
	if w.registered {
		// The line this call waited in: the notices it heard.
		if k := l.hub.Notices(n.Channel, w.base); k > 0 {
			// One less than heard: the notice of the release before the
			// call's first attempt may count or not.
			l.hub.SetLine(n.Channel, k-1, w.short)
		}
	}
	return lk, nil
}

// The order of waiters across processes. Every waiter of a key hears each
// release notice, and a Locker serves its own waiters in turn, but waiters
// of different Lockers would all attempt at once, and the one whose notice
// came first, or that had just called Lock, would win, the same ones again
// and again. Instead, once a Locker's waiter was woken by a notice and
// found the lock taken again (waiters elsewhere compete for it), its calls
// on the key put off each attempt after a wake:
//
//   - by age: a call that has waited for less than elderFirst puts off its
//     attempt by the difference, so that calls waiting longer go first;
//   - by place in line: a call that waited records how many notices it
//     heard before it got the lock (the line it waited in, as its Locker
//     last saw it, counted up to maxLine); the next calls put off their
//     attempt by lineSpacing (or twice their last round trip, if longer)
//     per notice they are short of that line.
//
// A call that hears another notice meanwhile counts again; one that hears
// none attempts at the end of its delay (those ahead may have left). The
// delays only order the attempts: each still runs, no notice is ignored, and
// no attempt is put off by more than maxPutOff in all (a slow round trip
// must not turn a long line into a sleep past the backoff with the key
// free); the backoff and the holder's lease bound the wait as before.
const (
	elderFirst  = 2 * time.Millisecond
	lineSpacing = 500 * time.Microsecond
	maxLine     = 64
	maxPutOff   = maxLine * lineSpacing
)

// contendedFor is how long a lost race keeps a Locker's calls on a key
// ordering their attempts.
const contendedFor = time.Second

// waiting is one Lock call between its attempts.
type waiting struct {
	l     *Locker
	n     names
	ttl   time.Duration
	start time.Time // the call's
	wake  chan struct{}
	turn  *queue.Ticket
	got   *Lock // obtained: the next in line waits for its release

	behind error // built when first needed
	// skipped: the head's first attempt was put off, the waiter ahead
	// holding the lock
	skipped bool
	// notices: notifications wanted; subscribe: and the waiter not yet
	// registered.
	notices, subscribe bool
	// held: an attempt is expected to find the key taken, so it runs the
	// acquire script, which answers with the holder's lease in the same
	// round trip.
	held bool
	// line: the line the last call of this Locker waited in (see
	// lineSpacing); base: the mark this call's notices count from, once
	// registered; rtt: the last attempt's round trip.
	line       int
	contended  bool // see elderFirst
	short      bool // the last delay ended with no notice: nobody ahead took the lock
	registered bool
	base       notify.Mark
	rtt        time.Duration
	last       notify.Mark   // the channel's, before the last attempt
	delayed    time.Duration // spent in inTurn
}

// ordered reports whether the call orders its attempts with other
// Lockers' waiters (see elderFirst).
func (w *waiting) ordered() bool { return w.contended || w.line > 1 }

// leave ends the call's turn in the line.
func (w *waiting) leave() {
	// A wake not acted on is for a release before this call ended: the next
	// in line attempts after it anyway. Dropped, it is not passed on to the
	// next (see notify.Hub) as a useless attempt.
	select {
	case <-w.wake:
	default:
	}
	if w.got != nil {
		w.turn.LeaveHolding(w.got.ExpiresAt())
	} else {
		w.turn.Leave()
	}
}

// attempt is one turn of the waiting loop: one attempt, or none while an
// earlier waiter of this Locker is ahead.
func (w *waiting) attempt(ctx context.Context) (*Lock, time.Duration, error) {
	l, n := w.l, &w.n
	if left, wait := w.inLine(ctx); wait {
		return nil, left, w.behind
	}
	if w.subscribe && w.ordered() {
		// A line across processes, and the channel subscribed: join it
		// before the first attempt, at its end.
		if m := l.hub.Since(n.Channel); m.Covers() {
			w.register(ctx, m)
		}
	}
	if w.registered && w.ordered() {
		w.inTurn(ctx)
	}
	// A mark of the channel's notices before the attempt: when the channel
	// is subscribed already (the line's registration, or a lingering one),
	// every release after it is heard. A notice for the registration of an
	// earlier head of the line is passed on to ours when ours replaces it
	// (notify.Hub passes on a wake its waiter left with).
	var mark notify.Mark
	heard := false
	if w.notices {
		heard = w.registered && l.hub.Heard(w.last) // a release since the last attempt
		mark = l.hub.Since(n.Channel)
		w.last = mark
	}
	sent := time.Now()
	lk, left, err := l.try(ctx, n, w.ttl, w.held)
	w.rtt = time.Since(sent)
	if !isNotObtained(err) {
		return lk, left, err
	}
	w.held = true
	if heard && !w.short {
		// Woken by a release, and the lock taken again first: by a waiter
		// elsewhere.
		w.contended = true
		l.hub.Lost(n.Channel)
	}
	if w.subscribe && ctx.Err() == nil && w.register(ctx, mark) {
		// Subscribed after that attempt: try again at once, so a release
		// in between is not missed.
		w.base = l.hub.Since(n.Channel)
		w.last = w.base
		return l.try(ctx, n, w.ttl, true)
	}
	// Covered: a release since the mark has poked wake. Or no
	// notifications now: poll (the hub retries later).
	return lk, left, err
}

// register registers the call's wake on the key's channel, with the mark
// taken before its last attempt (or now, before its first). again reports
// that the subscription was confirmed only now: an attempt must follow at
// once, for a release in between.
func (w *waiting) register(ctx context.Context, mark notify.Mark) (again bool) {
	w.subscribe = false
	release, covered, err := w.l.hub.WaitFrom(ctx, w.n.Channel, w.wake, mark)
	// The line keeps the registration until it ends, so the channel stays
	// subscribed from one head of the line to the next.
	w.turn.Keep(release)
	w.registered, w.base = err == nil, mark
	return err == nil && !covered
}

// inLine reports whether the call must wait without attempting: behind an
// earlier waiter of this Locker, or just after it got the lock (an attempt
// would find the key taken; the holder's release, or its loss, wakes the
// line).
func (w *waiting) inLine(ctx context.Context) (time.Duration, bool) {
	if w.turn == nil {
		return 0, false
	}
	var left time.Duration
	var ahead bool
	if !w.skipped && w.turn.Head() {
		left, ahead = w.turn.HolderAhead()
	}
	if !ahead && w.turn.Head() {
		return 0, false
	}
	if w.behind == nil {
		w.behind = fmt.Errorf("modern: lock %q: %w", w.n.Key, queue.ErrBehind)
	}
	if ahead {
		// Once: whatever wakes us next (the holder's release, a notice, the
		// backoff) leads to an attempt. Listen for notices now, as after a
		// failed attempt.
		w.skipped, w.held = true, true
		if w.subscribe {
			w.subscribe = false
			release, _ := w.l.hub.Wait(ctx, w.n.Channel, w.wake)
			w.turn.Keep(release)
		}
	}
	return left, true
}

// inTurn puts off an attempt while waiters ahead of this one attempt first
// (see elderFirst): until the call is old enough and has heard as many
// notices as the line is long, or has heard none for the rest of its
// delay, or its context ended (the attempt then reports it). The wakes it
// takes are for notices it counts; the attempt after it acts on them.
func (w *waiting) inTurn(ctx context.Context) {
	hub, ch := w.l.hub, w.n.Channel
	spacing := max(lineSpacing, 2*w.rtt)
	until := time.Now().Add(maxPutOff)
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	w.short = false
	defer func(start time.Time) { w.delayed += time.Since(start) }(time.Now())
	for {
		k := hub.Notices(ch, w.base)
		if k < 0 {
			return
		}
		var d time.Duration
		if k < w.line {
			d = time.Duration(w.line-k) * spacing
		}
		if w.contended {
			d = max(d, elderFirst-time.Since(w.start))
		}
		if d = min(d, time.Until(until)); d <= 0 {
			return
		}
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-w.wake: // a notice (or a release of this Locker's): count again
			if !t.Stop() {
				<-t.C
			}
		case <-t.C:
			w.short = k < w.line
			return // nobody ahead released meanwhile: maybe gone
		case <-ctx.Done():
			return
		}
	}
}

// try makes one attempt and, when it succeeds, returns the Lock. When the
// lock is held, it also returns the holder's remaining lease (0 if unknown).
// held says the key is expected to be held: the attempt then runs the
// acquire script, one round trip either way (see modernproto.Node).
// The attempt runs on a copy of prepare's names pn, bound in the Lock, which
// is made first so that the scripts' KEYS live in it, not in an allocation
// of their own.
func (l *Locker) try(ctx context.Context, pn *names, ttl time.Duration, held bool) (*Lock, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("modern: lock %q: %w: %w", pn.Key, lockbridge.ErrNotObtained, err)
	}
	token, err := l.cfg.Token()
	if err != nil {
		return nil, 0, fmt.Errorf("modern: token: %w", err)
	}
	arg := any(token) // boxed once for every script of this lock
	lk := &Lock{locker: l, names: *pn, token: token, arg: arg}
	n := &lk.names
	n.Bind()
	start := time.Now()
	fence, left, err := l.acquire(ctx, n, arg, ttl, held)
	if err != nil {
		if isNotObtained(err) {
			return nil, left, err
		}
		if ctxEnded(ctx, err) {
			return nil, 0, l.givenUp(ctx, n, token, err)
		}
		if !errors.Is(err, lockbridge.ErrUnknownOutcome) || l.cfg.WaitN > 0 {
			if errors.Is(err, lockbridge.ErrUnknownOutcome) {
				l.undo(ctx, n, arg) // not acknowledged by the replicas: not held
			}
			return nil, 0, err
		}
		// The acquire may have run and its reply been lost. The token is
		// ours alone, so finding it settles the outcome: held (a read is not
		// a resend: it changes nothing). Not finding it settles nothing: the
		// acquire may still be on its way (in the network, or on a
		// connection the client gave up) and run after the read. No adapter
		// can end the connection that carried it for sure, so that stays an
		// unknown outcome; the undo takes back an acquire that has landed.
		held, f, rerr := l.readBack(ctx, n, token)
		switch {
		case rerr != nil:
			l.undo(ctx, n, arg) // best effort: the key may hold our token
			return nil, 0, fmt.Errorf("modern: lock %q: %w (reading the token back: %v)", n.Key, err, rerr)
		case !held:
			l.undo(ctx, n, arg) // best effort: by our token only
			return nil, 0, fmt.Errorf(
				"modern: lock %q: the key does not hold our token %q yet, and the acquire may still run: %w", n.Key, token, err)
		}
		fence = f
	}
	lk.fence = fence
	lk.lease.Init("modern", start, ttl)
	if l.cfg.AutoRefresh {
		lk.lease.Observe(l.tel, n.Key)
		lk.lease.AutoRefresh(ctx, lk.autoRefresh)
	}
	return lk, 0, nil
}

// givenUp is the error of an attempt whose context ended (err) with its
// acquire maybe on its way: the SET may have reached Redis, so it is
// undone. Only an undo that released our token settles it (the SET ran,
// and runs once); one that found none leaves it open, for the SET may
// still be on its way and run after the undo (as after a read-back that
// finds none).
func (l *Locker) givenUp(ctx context.Context, n *names, token string, err error) error {
	if !errors.Is(err, lockbridge.ErrUnknownOutcome) {
		return fmt.Errorf("modern: lock %q: %w: %w", n.Key, lockbridge.ErrNotObtained, err)
	}
	if l.undo(ctx, n, any(token)) {
		return fmt.Errorf("modern: lock %q: %w: %w (the acquire ran, and was undone: %v)", n.Key,
			lockbridge.ErrNotObtained, ctxCause(ctx, err), err)
	}
	return fmt.Errorf("modern: lock %q: the context ended with the acquire on its way, and the release "+
		"that undoes it found no token %q of ours: the acquire may still run: %w", n.Key, token, err)
}

// readBack reports whether n's key holds token and, with fencing, the
// fence counter's value, read together (MGET: the counter shares the key's
// slot). While the key holds our token no one else acquired, so the counter
// holds the fence our acquire handed out.
func (l *Locker) readBack(ctx context.Context, n *names, token string) (held bool, fence int64, err error) {
	args := []any{"MGET", n.Key}
	if n.Fence != "" {
		args = append(args, n.Fence)
	}
	r, err := l.node.Client().Do(ctx, args...)
	if err != nil {
		return false, 0, err
	}
	vs, ok := r.([]any)
	if !ok || len(vs) != len(args)-1 {
		return false, 0, fmt.Errorf("modern: MGET: unexpected reply %#v", r)
	}
	if v, _ := vs[0].(string); v != token {
		return false, 0, nil
	}
	if n.Fence != "" {
		v, _ := vs[1].(string)
		if fence, err = strconv.ParseInt(v, 10, 64); err != nil {
			return false, 0, fmt.Errorf("modern: fence counter %q: %w", v, err)
		}
	}
	return true, fence, nil
}

// ctxCause is ctx's error, or, when the driver reported the deadline a
// moment before ctx says so, the context error err wraps.
func ctxCause(ctx context.Context, err error) error {
	switch cerr := ctx.Err(); {
	case cerr != nil:
		return cerr
	case errors.Is(err, context.Canceled):
		return context.Canceled
	}
	return context.DeadlineExceeded
}

// ctxEnded reports whether err is ctx's end rather than Redis's: the driver
// may report a deadline that passed a moment before ctx.Err() says so.
func ctxEnded(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// undo releases token's lock, best effort, after an attempt whose context
// ended with the command possibly on the wire. A first look that finds no key
// is repeated once, shortly after, for a SET that was overtaken. It reports
// whether it released the token: only that settles the attempt.
func (l *Locker) undo(ctx context.Context, n *names, token any) (released bool) {
	uctx, cancel := lease.UndoContext(ctx)
	defer cancel()
	for look := 1; ; look++ {
		code, err := l.node.Release(uctx, n, token)
		if err != nil || code != codeAbsent || look == 2 {
			return err == nil && code == codeOurs
		}
		t := time.NewTimer(undoRecheck)
		select {
		case <-t.C:
		case <-uctx.Done():
			t.Stop()
			return
		}
	}
}

// The per-node primitives (one script, one round trip, on one client) are
// in internal/protocol/modernproto, shared with redlock, which runs them on each of
// its nodes. The waiting loop (Locker.Lock) and the lock's life (Lock,
// internal/runtime/lease) are built on them.

// acquire makes one attempt, with WAIT after it when WithWait asks for it;
// through the acquire script when held.
func (l *Locker) acquire(ctx context.Context, n *names, token any, ttl time.Duration,
	held bool) (int64, time.Duration, error) {
	if l.cfg.WaitN == 0 {
		if held {
			ok, v, err := l.node.AcquireScripted(ctx, n, token, ttl)
			return outcome(n, ok, v, err)
		}
		return acquire(ctx, &l.node, n, token, ttl)
	}
	ok, v, acked, err := l.node.AcquireWait(ctx, n, token, ttl, l.cfg.WaitN, l.cfg.WaitTimeout)
	if errors.Is(err, driver.ErrNoPin) {
		return 0, 0, fmt.Errorf("modern: %w: WithWait needs a client that sends WAIT on the connection of the acquire: %w",
			lockbridge.ErrInvalid, err)
	}
	if !ok {
		if err != nil {
			return 0, 0, err
		}
		return notObtained(n, v)
	}
	if err == nil && acked >= int64(l.cfg.WaitN) {
		return v, 0, nil
	}
	// Held on the primary, not acknowledged enough: not held.
	re := &ReplicationError{Key: n.Key, want: l.cfg.WaitN, Acked: acked, err: err}
	if ctxEnded(ctx, err) {
		l.undo(ctx, n, token)
		return 0, 0, fmt.Errorf("modern: lock %q: %w: %w", n.Key, lockbridge.ErrNotObtained, re)
	}
	uctx, cancel := lease.UndoContext(ctx)
	defer cancel()
	code, rerr := l.node.Release(uctx, n, token)
	re.Released = rerr == nil && code == codeOurs
	return 0, 0, re
}

// acquire makes one attempt. It returns the fence (0 without fencing), or a
// *lockbridge.NotObtainedError and the holder's remaining lease (0 if it has no expiry).
func acquire(ctx context.Context, nd *modernproto.Node, n *names, token any,
	ttl time.Duration) (int64, time.Duration, error) {
	ok, v, err := nd.Acquire(ctx, n, token, ttl)
	return outcome(n, ok, v, err)
}

// outcome turns an acquire's reply into acquire's results.
func outcome(n *names, ok bool, v int64, err error) (int64, time.Duration, error) {
	if err != nil {
		return 0, 0, err
	}
	if ok {
		return v, 0, nil
	}
	return notObtained(n, v)
}

// notObtained is the error of an attempt that found the key held, with
// the holder's PTTL v in ms (-1: no expiry), and the wait it allows.
func notObtained(n *names, v int64) (int64, time.Duration, error) {
	held := time.Duration(v) * time.Millisecond
	left := held
	switch {
	case v < 0:
		left, held = 0, -1 // no expiry: the backoff decides
	case v == 0:
		left = time.Millisecond // expiring this very millisecond
	}
	return 0, left, &lockbridge.NotObtainedError{Pkg: "modern", Key: n.Key, HolderTTL: held}
}

// notHeld is the error of a script that found the lock not ours (code).
func notHeld(key string, code int64) *lockbridge.NotHeldError {
	r := lockbridge.ReasonGone
	if code == codeTaken {
		r = lockbridge.ReasonTaken
	}
	return &lockbridge.NotHeldError{Pkg: "modern", Key: key, Reason: r}
}
