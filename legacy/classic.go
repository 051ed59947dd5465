package legacy

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
)

// acquireClassic is one attempt in ModeClassic, the Java scheme's literal
// commands: SETNX; else GET, and when the stored expiry has passed, GETSET.
// A nil GETSET reply means our GETSET created the key: acquired (the Java
// seed reports failure there and leaves a phantom lock; we do not).
func (lk *Locker) acquireClassic(ctx context.Context, key, ekey string, ttl time.Duration) (*Lock, time.Duration, error) {
	p := lk.profile
	start, now := time.Now(), p.Now()
	w := p.Expiry(now, ttl)
	value := p.EncodeValue(w)
	ok, err := lk.c.SetNX(ctx, ekey, value)
	if err != nil {
		return nil, 0, redisErr("lock", key, err)
	}
	if ok {
		return lk.classicAcquired(ctx, key, ekey, w, value, ttl, start, now)
	}
	stored, ok, err := lk.c.Get(ctx, ekey)
	if err != nil {
		return nil, 0, redisErr("lock", key, err)
	}
	if !ok {
		// Released between SETNX and GET: the Java sequence gives up here;
		// the waiting loop retries at once.
		return nil, time.Nanosecond, fmt.Errorf("%s: lock %q was released during the attempt: %w", pkg, key, lockbridge.ErrNotObtained)
	}
	t, derr := p.DecodeValue(stored)
	if derr != nil {
		return nil, 0, foreign(key, legacyproto.Foreign(stored, len(stored), p.ValueCodec()))
	}
	if !p.Expired(t, now) {
		left, err := lk.held(key, t, now)
		return nil, left, err
	}
	old, ok, err := lk.c.GetSet(ctx, ekey, value)
	if err != nil {
		return nil, 0, redisErr("lock", key, err)
	}
	if !ok {
		return lk.classicAcquired(ctx, key, ekey, w, value, ttl, start, now) // we created the key
	}
	told, derr := p.DecodeValue(old)
	if derr != nil {
		// A foreign value written between our GET and GETSET, which the
		// GETSET has replaced: classic mode cannot avoid that.
		return nil, 0, foreign(key, legacyproto.Foreign(old, len(old), p.ValueCodec()))
	}
	if p.Expired(told, now) {
		return lk.classicAcquired(ctx, key, ekey, w, value, ttl, start, now)
	}
	// Another contender took it over between our GET and GETSET. Our GETSET
	// has overwritten its value with ours, as a losing Java contender does;
	// its owner-window release still frees the key.
	left, err := lk.held(key, told, now)
	return nil, left, err
}

// classicAcquired completes an acquire: the safety TTL, when set, costs a
// PEXPIRE. When that fails the error is returned and the lock ends by its
// value's expiry.
func (lk *Locker) classicAcquired(ctx context.Context, key, ekey string, w int64, value string, ttl time.Duration, start, now time.Time) (*Lock, time.Duration, error) {
	if err := lk.pexpire(ctx, "lock", key, ekey); err != nil {
		return nil, 0, err
	}
	return lk.newLock(key, ekey, w, value, ttl, start, now), 0, nil
}

func (lk *Locker) pexpire(ctx context.Context, op, key, ekey string) error {
	if lk.safety <= 0 {
		return nil
	}
	if _, err := lk.c.Do(ctx, "PEXPIRE", ekey, lk.safetyArg()); err != nil {
		return redisErr(op, key, err)
	}
	return nil
}

// releaseClassic releases as the Java seed does: DEL when the local clock
// says our lease has not ended. It returns legacy_owner's codes: ours
// (deleted), gone (DEL found no key), expired (no DEL sent).
func (l *Lock) releaseClassic(ctx context.Context) (int64, error) {
	p := l.lk.profile
	w, _, _ := l.state()
	if !(p.Time(p.Now()) < w) {
		return ownerExpired, nil
	}
	ctx, cancel := l.lk.beforeW(ctx, w)
	defer cancel()
	deleted, err := l.lk.c.Del(ctx, l.ekey)
	if err != nil {
		return 0, redisErr("unlock", l.key, err)
	}
	if !deleted {
		return ownerGone, nil
	}
	return ownerOurs, nil
}

// refreshClassic rewrites our value with GET and GETSET, no script: when
// the local clock says our lease has not ended and the stored value is
// within our owner window, GETSET the new value. If another holder's value
// lands between the GET and the GETSET it is overwritten (and ownerTaken
// returned): in classic mode a refresh can, in that race, extend someone
// else's lock, a cost in liveness only.
func (l *Lock) refreshClassic(ctx context.Context, nvalue string) (int64, error) {
	p := l.lk.profile
	w := l.expiry()
	if !(p.Time(p.Now()) < w) {
		return ownerExpired, nil
	}
	ctx, cancel := l.lk.beforeW(ctx, w)
	defer cancel()
	stored, ok, err := l.lk.c.Get(ctx, l.ekey)
	if err != nil {
		return 0, redisErr("refresh", l.key, err)
	}
	if !ok {
		return ownerGone, nil
	}
	if !l.inWindow(stored) {
		return ownerTaken, nil
	}
	old, ok, err := l.lk.c.GetSet(ctx, l.ekey, nvalue)
	if err != nil {
		return 0, redisErr("refresh", l.key, err)
	}
	if ok && !l.inWindow(old) {
		return ownerTaken, nil
	}
	if err := l.lk.pexpire(ctx, "refresh", l.key, l.ekey); err != nil {
		return 0, err
	}
	return ownerOurs, nil
}

// beforeW bounds ctx by W, our lease's end by the profile's clock, for the
// commands of a classic release or refresh, which that clock allowed
// before W: none of them may be sent after it, when a Java client may
// have taken the lock over. In a cluster the adapter sends a command the
// cluster refused (CLUSTERDOWN) again after pauses (adapter.ClusterRetryFor):
// past W, a late DEL would delete the new holder's lock, and a late GETSET
// would put our earlier expiry in its place. A command still unanswered at
// W is an unknown outcome, and the lock ends.
func (lk *Locker) beforeW(ctx context.Context, w int64) (context.Context, context.CancelFunc) {
	p := lk.profile
	return context.WithDeadline(ctx, time.Now().Add(p.TimeOf(w).Sub(p.Now())))
}

// inWindow is the owner-window test on stored: it decodes to T with
// |T − W| ≤ lease/2 (legacy_owner.lua without the clock condition).
func (l *Lock) inWindow(stored string) bool {
	p := l.lk.profile
	w, _, lease := l.state()
	t, err := p.DecodeValue(stored)
	return err == nil && within(t, w, p.Units(lease))
}

// within reports |t − w| ≤ lease/2, without overflow.
func within(t, w, lease int64) bool {
	var d uint64
	if t >= w {
		d = uint64(t) - uint64(w)
	} else {
		d = uint64(w) - uint64(t)
	}
	return lease >= 0 && d <= uint64(lease/2)
}
