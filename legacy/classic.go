package legacy

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
)

// acquireClassic is one attempt in the classic mode, the Java scheme's literal
// commands: SETNX; else GET, and when the stored expiry has passed, GETSET.
// A nil GETSET reply means our GETSET created the key: acquired (the Java
// seed reports failure there and leaves a phantom lock; we do not).
func (l *Locker) acquireClassic(ctx context.Context, key, ekey string, ttl time.Duration) (*Lock, time.Duration,
	error) {
	p := l.profile
	start, now := time.Now(), p.Now()
	w := p.Expiry(now, ttl)
	value := p.EncodeValue(w)
	ok, err := l.c.SetNX(ctx, ekey, value)
	if err != nil {
		return nil, 0, redisErr("lock", key, err)
	}
	if ok {
		return l.classicAcquired(ctx, key, ekey, w, value, ttl, start, now)
	}
	stored, ok, err := l.c.Get(ctx, ekey)
	if err != nil {
		return nil, 0, redisErr("lock", key, err)
	}
	if !ok {
		// Released between SETNX and GET: the Java sequence gives up here;
		// the waiting loop retries at once.
		return nil, time.Nanosecond, fmt.Errorf("%s: lock %q was released during the attempt: %w", pkg, key,
			lockbridge.ErrNotObtained)
	}
	t, derr := p.DecodeValue(stored)
	if derr != nil {
		return nil, 0, foreign(key, legacyproto.Foreign(stored, len(stored), p.ValueCodec()))
	}
	if !p.Expired(t, now) {
		left, err := l.held(key, t, now)
		return nil, left, err
	}
	old, ok, err := l.c.GetSet(ctx, ekey, value)
	if err != nil {
		return nil, 0, redisErr("lock", key, err)
	}
	if !ok {
		return l.classicAcquired(ctx, key, ekey, w, value, ttl, start, now) // we created the key
	}
	told, derr := p.DecodeValue(old)
	if derr != nil {
		// A foreign value written between our GET and GETSET, which the
		// GETSET has replaced: classic mode cannot avoid that.
		return nil, 0, foreign(key, legacyproto.Foreign(old, len(old), p.ValueCodec()))
	}
	if p.Expired(told, now) {
		return l.classicAcquired(ctx, key, ekey, w, value, ttl, start, now)
	}
	// Another contender took it over between our GET and GETSET. Our GETSET
	// has overwritten its value with ours, as a losing Java contender does;
	// its owner-window release still frees the key.
	left, err := l.held(key, told, now)
	return nil, left, err
}

// classicAcquired completes an acquire: the safety TTL, when set, costs a
// PEXPIRE. When that fails the error is returned and the lock ends by its
// value's expiry.
func (l *Locker) classicAcquired(ctx context.Context, key, ekey string, w int64, value string, ttl time.Duration,
	start, now time.Time) (*Lock, time.Duration, error) {
	if err := l.pexpire(ctx, "lock", key, ekey); err != nil {
		return nil, 0, err
	}
	return l.newLock(key, ekey, w, value, ttl, start, now), 0, nil
}

func (l *Locker) pexpire(ctx context.Context, op, key, ekey string) error {
	if l.safety <= 0 {
		return nil
	}
	if _, err := l.c.Do(ctx, "PEXPIRE", ekey, l.safetyArg()); err != nil {
		return redisErr(op, key, err)
	}
	return nil
}

// releaseClassic releases as the Java seed does: DEL when the local clock
// says our lease has not ended. It returns legacy_owner's codes: ours
// (deleted), gone (DEL found no key), expired (no DEL sent).
func (lk *Lock) releaseClassic(ctx context.Context) (int64, error) {
	p := lk.locker.profile
	w, _, _ := lk.state()
	if !(p.Time(p.Now()) < w) {
		return ownerExpired, nil
	}
	ctx, cancel := lk.locker.beforeW(ctx, w)
	defer cancel()
	deleted, err := lk.locker.c.Del(ctx, lk.ekey)
	if err != nil {
		return 0, redisErr("unlock", lk.key, err)
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
func (lk *Lock) refreshClassic(ctx context.Context, nvalue string) (int64, error) {
	p := lk.locker.profile
	w := lk.expiry()
	if !(p.Time(p.Now()) < w) {
		return ownerExpired, nil
	}
	ctx, cancel := lk.locker.beforeW(ctx, w)
	defer cancel()
	stored, ok, err := lk.locker.c.Get(ctx, lk.ekey)
	if err != nil {
		return 0, redisErr("refresh", lk.key, err)
	}
	if !ok {
		return ownerGone, nil
	}
	if !lk.inWindow(stored) {
		return ownerTaken, nil
	}
	old, ok, err := lk.locker.c.GetSet(ctx, lk.ekey, nvalue)
	if err != nil {
		return 0, redisErr("refresh", lk.key, err)
	}
	if ok && !lk.inWindow(old) {
		return ownerTaken, nil
	}
	if err := lk.locker.pexpire(ctx, "refresh", lk.key, lk.ekey); err != nil {
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
func (l *Locker) beforeW(ctx context.Context, w int64) (context.Context, context.CancelFunc) {
	p := l.profile
	return context.WithDeadline(ctx, time.Now().Add(p.TimeOf(w).Sub(p.Now())))
}

// inWindow is the owner-window test on stored: it decodes to T with
// |T − W| ≤ lease/2 (legacy_owner.lua without the clock condition).
func (lk *Lock) inWindow(stored string) bool {
	p := lk.locker.profile
	w, _, lease := lk.state()
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
