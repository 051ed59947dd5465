package legacy

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
)

// acquireAtomic is one attempt in the atomic mode. A free key takes one plain
// command, the Java scheme's own first step: SETNX key value (SET key value
// NX PX safety with a safety TTL: the same write and its TTL at once). Only
// a key that is there already takes the second round trip, acquire.lua,
// which decodes it and takes it over when it has expired (its own SETNX
// first: the key may have gone in between). A Locker's first acquire runs
// the script whatever the key holds, so that a user who may not run
// scripts — and so could not release — is refused before anything is
// written.
func (l *Locker) acquireAtomic(ctx context.Context, key, ekey string, ttl time.Duration) (*Lock, time.Duration, error) {
	p := l.profile
	start, now := time.Now(), p.Now()
	w := p.Expiry(now, ttl)
	value := p.EncodeValue(w)
	if l.scripted.Load() {
		set, err := l.setNX(ctx, ekey, value)
		if err != nil {
			// Not undone, as below.
			return nil, 0, redisErr("lock", key, err)
		}
		if set {
			return l.newLock(key, ekey, w, value, ttl, start, now), 0, nil
		}
	}
	args := acquireArgs{key: ekey, value: value, codec: p.CodecID(), cutoff: strconv.FormatInt(p.Cutoff(now), 10),
		safety: l.safetyArg()}
	r, err := l.c.Eval(ctx, acquireScript, args.keys(), args.argv()...)
	if driver.Permitted(err) {
		l.scripted.Store(true)
	}
	if err != nil {
		// When ctx ended with the script on the wire, it may have run and
		// left our value in the key. It is not undone: a legacy value names
		// no owner, and another contender of the same profile that locked in
		// the same millisecond wrote the very same bytes — deleting "ours"
		// could free its lock. The value expires with the lease (see TryLock).
		return nil, 0, redisErr("lock", key, err)
	}
	a, ok := parseAcquire(r)
	if !ok {
		return nil, 0, unexpected("lock", key, r)
	}
	switch a.state {
	case stateFree, stateExpired:
		return l.newLock(key, ekey, w, value, ttl, start, now), 0, nil
	case stateLive:
		t, derr := p.DecodeValue(a.stored)
		if derr != nil {
			return nil, 0, fmt.Errorf("%w: live %q: %v", errInconsistent, a.stored, derr)
		}
		left, err := l.held(key, t, now)
		return nil, left, err
	case stateForeign:
		size := int64(len(a.stored))
		if a.cut {
			size = a.size
		} else if _, derr := p.DecodeValue(a.stored); derr == nil {
			return nil, 0, fmt.Errorf("%w: foreign %q", errInconsistent, a.stored)
		}
		return nil, 0, foreign(key, legacyproto.Foreign(a.stored, int(size), p.ValueCodec()))
	}
	return nil, 0, unexpected("lock", key, r)
}

// setNX is the plain first step of acquireAtomic: SETNX key value, or SET
// key value NX PX with the safety TTL when there is one.
func (l *Locker) setNX(ctx context.Context, ekey, value string) (bool, error) {
	if l.safety > 0 {
		return l.c.SetNXPX(ctx, ekey, value, l.safety)
	}
	return l.c.SetNX(ctx, ekey, value)
}

// acquireReply is acquire.lua's reply: {state, the stored value (when the
// key held one), its size (when the script cut it: no prefix that long
// decodes)}.
type acquireReply struct {
	state  int64
	stored string
	size   int64
	cut    bool
}

// parseAcquire reads acquire.lua's reply r; ok is false when r is not of
// its shape.
func parseAcquire(r any) (a acquireReply, ok bool) {
	arr, ok := r.([]any)
	if !ok || len(arr) == 0 {
		return a, false
	}
	if a.state, ok = arr[0].(int64); !ok {
		return a, false
	}
	if len(arr) > 1 {
		if a.stored, ok = arr[1].(string); !ok {
			return a, false
		}
	}
	if len(arr) > 2 && a.state == stateForeign {
		if a.size, ok = arr[2].(int64); !ok {
			return a, false
		}
		a.cut = true
	}
	return a, true
}

// window returns the owner window of our expiry (legacyproto.Profile.OwnerArgs),
// reading the profile's clock now.
func (lk *Lock) window() legacyproto.OwnerWindow {
	w, value, lease := lk.state()
	locker := lk.locker
	return locker.owner.Window(locker.profile, locker.profile.WDecimal(w, value), locker.leaseArg(lease))
}

// releaseAtomic runs release.lua; it returns legacy_owner's code. Its
// arguments go in lk.args (the caller holds lk.op), cleared once it ran.
func (lk *Lock) releaseAtomic(ctx context.Context) (int64, error) {
	a := releaseArgs{key: &lk.keys, window: lk.window()}
	r, err := lk.locker.c.Eval(ctx, releaseScript, a.keys(), a.argv(lk.args[:0])...)
	clear(lk.args[:])
	if err != nil {
		return 0, redisErr("unlock", lk.key, err)
	}
	code, ok := r.(int64)
	if !ok || code < ownerLate || code > ownerOurs {
		return 0, unexpected("unlock", lk.key, r)
	}
	return code, nil
}

// refreshAtomic runs refresh.lua to write the new expiry nw as nvalue; it
// returns legacy_owner's code. Its arguments go in lk.args, as
// releaseAtomic's.
func (lk *Lock) refreshAtomic(ctx context.Context, nvalue string) (int64, error) {
	a := refreshArgs{key: &lk.keys, window: lk.window(), value: nvalue, safety: lk.locker.safetyArg()}
	r, err := lk.locker.c.Eval(ctx, refreshScript, a.keys(), a.argv(lk.args[:0])...)
	clear(lk.args[:])
	if err != nil {
		return 0, redisErr("refresh", lk.key, err)
	}
	code, ok := r.(int64)
	if !ok || code < ownerLate || code > ownerOurs {
		return 0, unexpected("refresh", lk.key, r)
	}
	return code, nil
}
