package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/lockbridge/lockbridge/modern"
)

// dualLock is a lock taken in PhaseDualWrite (both keys written) or
// PhaseDualRead (the modern key only). It is released and refreshed under
// the rules of the phase it was taken in, whatever the Locker runs since.
type dualLock struct {
	l     *Locker
	phase Phase
	a     args
	token string
	fence int64
	life  lease.Lease

	// mu serialises Unlock and the refresh rounds (the auto-refresh never
	// waits behind a Refresh by hand: see lease.Rounds) and guards what
	// follows.
	mu       lease.Rounds
	w        int64         // the legacy expiry written (dual-write)
	value    string        // its bytes
	lease    time.Duration // the lease w was written with
	released bool          // Unlock reached a verdict
	sent     landing       // what its refreshes may have done on the server
}

var _ lockbridge.Lock = (*dualLock)(nil)

// start is when the acquire was sent (monotonic); now the legacy profile's
// clock then, which w was computed with.
func newDualLock(l *Locker, p Phase, a args, token string, fence, w int64, value string, start,
	now time.Time) *dualLock {
	d := &dualLock{l: l, phase: p, a: a, token: token, fence: fence, w: w, value: value, lease: a.ttl}
	d.life.Init(pkg, start, d.localTTL(now, a.ttl, w))
	d.life.Observe(l.tel, a.key) // a phase move ends it in the background
	if l.mset.AutoRefresh {
		d.life.AutoRefresh(context.Background(), func(ctx context.Context) error { return d.refresh(ctx, a.ttl, true) })
	}
	return d
}

func fenceName(modernKey string) (string, bool) {
	return keyslot.Companion(modernKey, modern.FenceSuffix)
}

// Key returns the lock name the caller gave.
func (d *dualLock) Key() string { return d.a.key }

// Token returns the modern token.
func (d *dualLock) Token() string { return d.token }

// Fence returns the fencing token (WithModern(modern.WithFencing())), else 0.
func (d *dualLock) Fence() int64 { return d.fence }

// Phase returns the phase the lock was taken in.
func (d *dualLock) Phase() Phase { return d.phase }

// ExpiresAt is the local end of the lease.
func (d *dualLock) ExpiresAt() time.Time { return d.life.ExpiresAt() }

// Done is closed once the lock is released or known lost, or at the give-up
// point, a twelfth of the lease before its local end.
func (d *dualLock) Done() <-chan struct{} { return d.life.Done() }

// Err is nil while held and after a clean Unlock; it wraps ErrLost after a
// loss.
func (d *dualLock) Err() error { return d.life.Err() }

// Unlock releases the modern key by token and, for a dual-write lock, the
// legacy key by the owner window, in one script.
func (d *dualLock) Unlock(ctx context.Context) error {
	if err := check.Context(pkg, ctx); err != nil {
		return err
	}
	d.life.StopRefresh()
	_ = d.mu.Enter(false)
	defer d.mu.Leave()
	if d.released || (d.life.Ended() && !d.life.RanOut()) {
		// Released already, or lost: never send a second release, which
		// could meet a successor's lock. (A lease that ran out by our
		// clock was neither: its release is sent, under the scripts'
		// checks.)
		if err := d.life.Err(); err != nil {
			return fmt.Errorf("%s: unlock %q: %w: %w", pkg, d.a.key, lockbridge.ErrNotHeld, err)
		}
		return fmt.Errorf("%s: unlock: %w", pkg, &lockbridge.NotHeldError{Pkg: pkg, Key: d.a.key,
			Reason: lockbridge.ReasonEnded, Detail: "released"})
	}
	err := d.releaseLocked(ctx)
	switch {
	case err == nil:
		d.released = true
		d.life.End(nil)
	case isNotHeld(err), errors.As(err, new(*lease.UnknownReleaseError)):
		d.released = true
		d.life.Lose(err)
	}
	return err
}

func (d *dualLock) releaseLocked(ctx context.Context) error {
	_, err := d.releaseCodes(ctx)
	return err
}

// releaseCodes runs release.lua once; it also returns the modern key's
// code (migrateproto.ModernOurs when our token was there, and deleted).
func (d *dualLock) releaseCodes(ctx context.Context) (int64, error) {
	call := migrateproto.ReleaseArgs{LegacyKey: d.a.legacyKey, ModernKey: d.a.modernKey, Channel: channelOr(d.a),
		DualWrite: d.phase == PhaseDualWrite, Token: d.token, Owner: d.l.profile.OwnerArgs(d.w, d.lease)}
	if d.a.channel != "" {
		call.Publish = d.l.pub
	}
	r, err := d.l.c.Eval(ctx, migrateproto.ReleaseScript, call.Keys(), call.Argv()...)
	if errors.Is(err, lockbridge.ErrUnknownOutcome) {
		// The release may have run: it is never sent again (no resends),
		// and the lock ends as lost; if the release did not run, the keys
		// expire at their lease.
		return 0, lease.UnansweredRelease(pkg, d.a.key, err)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: unlock %q: %w", pkg, d.a.key, err)
	}
	m, l, err := codes(r)
	if err != nil {
		return 0, fmt.Errorf("%s: unlock %q: %w", pkg, d.a.key, err)
	}
	if m != migrateproto.ModernOurs || l != migrateproto.OwnerOurs {
		// l != 1 with m == 1: the modern key was ours and is released, but
		// the legacy half was not (another value, or our expiry passed):
		// legacy lockers may not have been kept out to the end.
		return m, notHeld(d.a.key, m, l)
	}
	return m, nil
}

// Refresh extends both keys (dual-write) or the modern key (dual-read) to
// ttl from now.
func (d *dualLock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := check.Context(pkg, ctx); err != nil {
		return err
	}
	if err := d.l.profile.CheckTTL(ttl); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("%s: %w: ttl %v is below 1ms", pkg, lockbridge.ErrInvalid, ttl)
	}
	err := d.refresh(ctx, ttl.Truncate(time.Millisecond), false) // PX takes whole milliseconds
	if isNotHeld(err) {
		d.life.Lose(err)
	}
	return err
}

// refresh runs a refresh round of ttl; auto marks the auto-refresh's, which
// never waits behind a Refresh by hand. The lease is shortened before the
// send (lease.Sending): a shorter ttl may take effect whether or not the
// reply comes.
func (d *dualLock) refresh(ctx context.Context, ttl time.Duration, auto bool) error {
	var until time.Time // the phase lease's end; zero without a namespace
	if f := d.l.follow; f != nil {
		var err error
		if until, err = f.trusted(ctx, ttl); err != nil { // never refresh in a phase no longer trusted
			return fmt.Errorf("%s: refresh %q: %w", pkg, d.a.key, err)
		}
	}
	if err := d.mu.Enter(auto); err != nil {
		return err
	}
	defer d.mu.Leave()
	if d.released || d.life.Ended() { // a lock whose lease ended is over: no refresh revives it
		return fmt.Errorf("%s: refresh %q: %w", pkg, d.a.key, lockbridge.ErrNotHeld)
	}
	start, now := time.Now(), d.l.profile.Now()
	w := d.l.profile.Expiry(now, ttl)
	d.life.Sending(start, d.localTTL(now, ttl, w))
	value := d.l.profile.EncodeValue(w)
	px := ttl
	if d.phase == PhaseDualWrite {
		px = d.l.modernPX(now, ttl, w)
	}
	call := migrateproto.RefreshArgs{LegacyKey: d.a.legacyKey, ModernKey: d.a.modernKey,
		DualWrite: d.phase == PhaseDualWrite, Token: d.token, PX: px, Value: value,
		Owner: d.l.profile.OwnerArgs(d.w, d.lease)}
	d.sent.send()
	r, err := d.sendRefresh(ctx, call)
	defer d.sent.back(ttl)
	if err != nil {
		err = fmt.Errorf("%s: refresh %q: %w", pkg, d.a.key, err)
		if d.phase == PhaseDualWrite && errors.Is(err, lockbridge.ErrUnknownOutcome) {
			// The legacy value may have been rewritten, and its expiry is
			// not unique: later commands' owner window cannot tell it
			// from another holder's. The lock ends. (Dual-read keeps the
			// lock until its timer: a later refresh is judged by token.)
			d.life.Lose(err)
		}
		return err
	}
	m, l, err := codes(r)
	if err != nil {
		return fmt.Errorf("%s: refresh %q: %w", pkg, d.a.key, err)
	}
	if m != migrateproto.ModernOurs || l != migrateproto.OwnerOurs {
		return notHeld(d.a.key, m, l)
	}
	if d.phase == PhaseDualWrite {
		d.w, d.value, d.lease = w, value, ttl
	}
	if !until.IsZero() && !time.Now().Before(until) {
		// Back after the phase lease ended: the registry may not cover
		// the new lease. Keep the one it covered.
		return fmt.Errorf("%s: refresh %q: %w", pkg, d.a.key, d.l.follow.outlived(d.phase, "refresh"))
	}
	local := d.localTTL(now, ttl, w)
	return d.life.Extend(start.Add(local), local)
}

// sendRefresh runs refresh.lua with call, once: a refresh whose reply
// never came is an unknown outcome, never sent again (no resends). It may
// still run on the server at any later time, so no later grant counts for
// more than its ttl past its own send (lease.Unsure).
func (d *dualLock) sendRefresh(ctx context.Context, call migrateproto.RefreshArgs) (any, error) {
	r, err := d.l.c.Eval(ctx, migrateproto.RefreshScript, call.Keys(), call.Argv()...)
	if errors.Is(err, lockbridge.ErrUnknownOutcome) {
		d.life.Unsure(call.PX)
	}
	return r, err
}

// localTTL is the lease as this holder must count it: ttl, or less in
// dual-write when legacy lockers may take over earlier — at legacyEnd(W),
// which for a seconds profile without +1 can come before start+ttl.
// now is the profile's clock when w was computed.
func (d *dualLock) localTTL(now time.Time, ttl time.Duration, w int64) time.Duration {
	if d.phase != PhaseDualWrite {
		return ttl
	}
	if end := d.l.legacyEnd(w).Sub(now); end < ttl {
		return end
	}
	return ttl
}

func channelOr(a args) string {
	if a.channel != "" {
		return a.channel
	}
	return a.modernKey // unused by the script without a publish command
}

func codes(r any) (m, l int64, err error) {
	reply, ok := r.([]any)
	if ok && len(reply) == 2 {
		m, ok1 := reply[0].(int64)
		l, ok2 := reply[1].(int64)
		if ok1 && ok2 {
			return m, l, nil
		}
	}
	return 0, 0, fmt.Errorf("unexpected reply %#v", r)
}

// notHeld is the error of a dual-phase release or refresh whose script
// found the lock not ours, from the codes it returned for each key: for
// the modern key 0 (another token) or -1 (gone); for the legacy key of a
// dual-write lock 0 (another value), -1 (gone), -2 (our expiry has passed
// by our own clock, the legacy profile's) or -3 (the server's clock was
// past it by more than the server-clock margin: the command reached Redis
// late); 1 when a key was still ours.
func notHeld(key string, m, l int64) *lockbridge.NotHeldError {
	e := &lockbridge.NotHeldError{Pkg: pkg, Key: key}
	switch {
	case m == migrateproto.ModernAbsent:
		e.Reason, e.Detail = lockbridge.ReasonGone, "the modern key has expired"
	case l == migrateproto.OwnerTaken:
		e.Reason, e.Detail = lockbridge.ReasonTaken, "the legacy key holds another value"
	case l == migrateproto.OwnerGone:
		e.Reason, e.Detail = lockbridge.ReasonGone, "the legacy key is gone"
	case l == migrateproto.OwnerExpired:
		e.Reason, e.Detail = lockbridge.ReasonExpired, "the legacy expiry has passed by our clock"
	case l == migrateproto.OwnerLate:
		e.Reason, e.Detail = lockbridge.ReasonExpired,
			"the legacy expiry had passed by the server's clock, beyond the margin, when the command ran"
	default:
		e.Reason, e.Detail = lockbridge.ReasonTaken, "the modern key holds another token"
	}
	return e
}

func isNotHeld(err error) bool {
	return err != nil && errors.Is(err, lockbridge.ErrNotHeld)
}
