package legacy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// acquireAtomic is one attempt in ModeAtomic: one round trip (acquire.lua).
func (lk *Locker) acquireAtomic(ctx context.Context, key, ekey string, ttl time.Duration) (*Lock, time.Duration, error) {
	p := lk.profile
	now := p.Now()
	w := p.Expiry(now, ttl)
	value := p.EncodeValue(w)
	r, err := lk.c.Eval(ctx, acquireScript, []string{ekey},
		value, p.CodecID(), strconv.FormatInt(p.Time(now), 10), lk.safetyArg())
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			lk.undo(ctx, ekey, value) // the script may have run: leave no lock nobody holds
		}
		return nil, 0, redisErr("lock", key, err)
	}
	arr, ok := r.([]any)
	if !ok || len(arr) == 0 {
		return nil, 0, unexpected("lock", key, r)
	}
	state, ok := arr[0].(int64)
	if !ok {
		return nil, 0, unexpected("lock", key, r)
	}
	var stored string
	if len(arr) > 1 {
		if stored, ok = arr[1].(string); !ok {
			return nil, 0, unexpected("lock", key, r)
		}
	}
	switch state {
	case stateFree, stateExpired:
		return lk.newLock(key, ekey, w, value, ttl), 0, nil
	case stateLive:
		t, derr := p.DecodeValue(stored)
		if derr != nil {
			return nil, 0, fmt.Errorf("%w: live %q: %v", errInconsistent, stored, derr)
		}
		left, err := lk.held(key, t, now)
		return nil, left, err
	case stateForeign:
		size := int64(len(stored))
		if len(arr) > 2 { // cut by the script: no prefix that long decodes
			if size, ok = arr[2].(int64); !ok {
				return nil, 0, unexpected("lock", key, r)
			}
		} else if _, derr := p.DecodeValue(stored); derr == nil {
			return nil, 0, fmt.Errorf("%w: foreign %q", errInconsistent, stored)
		}
		return nil, 0, foreign(key, foreignValue(stored, int(size), p.ValueCodec()))
	}
	return nil, 0, unexpected("lock", key, r)
}

// undo deletes, best effort, the value an acquire whose context ended may
// have written, on a detached context bounded by undoTimeout. A script still
// in flight behind it is looked for once more, undoRecheck later.
func (lk *Locker) undo(ctx context.Context, ekey, value string) {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	for look := 1; look <= 2; look++ {
		r, err := lk.c.Eval(uctx, undoScript, []string{ekey}, value)
		if err != nil || r == int64(1) || look == 2 {
			return
		}
		select {
		case <-time.After(undoRecheck):
		case <-uctx.Done():
			return
		}
	}
}

// The bounds of undo.
const (
	undoTimeout = 250 * time.Millisecond
	undoRecheck = 2 * time.Millisecond
)

// releaseAtomic runs release.lua; it returns legacy_owner's code.
func (l *Lock) releaseAtomic(ctx context.Context) (int64, error) {
	p := l.lk.profile
	w, value, lease := l.state()
	r, err := l.lk.c.Eval(ctx, releaseScript, []string{l.ekey},
		p.CodecID(), strconv.FormatInt(w, 10), strconv.FormatInt(p.Units(lease), 10), p.UnitID(), value)
	if err != nil {
		return 0, redisErr("unlock", l.key, err)
	}
	code, ok := r.(int64)
	if !ok || code < ownerExpired || code > ownerOurs {
		return 0, unexpected("unlock", l.key, r)
	}
	return code, nil
}

// refreshAtomic runs refresh.lua to write the new expiry nw as nvalue; it
// returns legacy_owner's code.
func (l *Lock) refreshAtomic(ctx context.Context, nvalue string) (int64, error) {
	p := l.lk.profile
	w, _, lease := l.state()
	r, err := l.lk.c.Eval(ctx, refreshScript, []string{l.ekey},
		p.CodecID(), strconv.FormatInt(w, 10), strconv.FormatInt(p.Units(lease), 10), p.UnitID(),
		nvalue, l.lk.safetyArg())
	if err != nil {
		return 0, redisErr("refresh", l.key, err)
	}
	code, ok := r.(int64)
	if !ok || code < ownerExpired || code > ownerOurs {
		return 0, unexpected("refresh", l.key, r)
	}
	return code, nil
}
