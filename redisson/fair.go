package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
)

// The plain and the fair lock differ only in their scripts (scripts.go) and
// in the channel a waiter listens on; these pick them.

// waitFor is a fair Lock call's wait: the time to ctx's deadline, or
// WithFair's. It is 0 (never queue) without WithFair.
func (l *Locker) waitFor(ctx context.Context) time.Duration {
	if !l.cfg.fair {
		return 0
	}
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d).Truncate(time.Millisecond), time.Millisecond)
	}
	return l.cfg.fairWait
}

// acquire makes one attempt for field. A fair Locker queues field when wait
// is set (a Lock call) and never when it is 0 (TryLock). held reports
// success (with a fenced Locker, fence is the token it got); otherwise
// holder is the holder's remaining lease as the script replied (negative:
// no expiry), or 0 when it did not say.
func (l *Locker) acquire(ctx context.Context, n *names, field string, ttl, wait time.Duration) (held bool,
	holder time.Duration, fence int64, err error) {
	var r any
	now := time.Now().UnixMilli() // the fair queue's clock: it orders waiters, it never admits anyone
	switch {
	case l.cfg.fencing:
		a := fencedAcquireArgs{key: n.key, counter: n.token, lease: ttl, field: field}
		r, err = l.c.Eval(ctx, fencedAcquireScript, a.keys(), a.argv()...)
		return fenced(r, err)
	case !l.cfg.fair:
		a := acquireArgs{key: n.key, lease: ttl, field: field}
		r, err = l.c.Eval(ctx, acquireScript, a.keys(), a.argv()...)
	case wait > 0:
		a := fairAcquireArgs{key: n.key, queue: n.queue, timeouts: n.timeouts, lease: ttl, field: field, wait: wait,
			now: now}
		r, err = l.c.Eval(ctx, fairAcquireScript, a.keys(), a.argv()...)
	default:
		a := fairTryArgs{key: n.key, queue: n.queue, timeouts: n.timeouts, lease: ttl, field: field, now: now,
			fairWait: l.cfg.fairWait}
		r, err = l.c.Eval(ctx, fairTryScript, a.keys(), a.argv()...)
		if err == nil && r != nil {
			return false, 0, 0, nil // fairTryRefused: held by another, or others wait first
		}
	}
	if err != nil || r == nil {
		return err == nil, 0, 0, err
	}
	ms, ok := r.(int64)
	if !ok {
		return false, 0, 0, unexpected("acquire", r)
	}
	return false, holderPTTL(ms), 0, nil
}

// holderPTTL is the holder's lease left from its PTTL in ms: a PTTL of 0
// (expiring this very millisecond) is 1 ms, so the waiter retries at once
// instead of taking 0 for "unknown" and sleeping its whole backoff.
func holderPTTL(ms int64) time.Duration {
	if ms == 0 {
		return time.Millisecond
	}
	return time.Duration(ms) * time.Millisecond
}

// fenced reads the fenced acquire's reply: {fencedNone, token} when
// acquired, {PTTL, fencedNone} when not (told apart by the token: a PTTL
// of -1 is a lock without expiry).
func fenced(r any, err error) (held bool, holder time.Duration, fence int64, _ error) {
	if err != nil {
		return false, 0, 0, err
	}
	v, ok := r.([]any)
	if !ok || len(v) != 2 {
		return false, 0, 0, unexpected("fenced_acquire", r)
	}
	ms, ok1 := v[0].(int64)
	token, ok2 := v[1].(int64)
	if !ok1 || !ok2 {
		return false, 0, 0, unexpected("fenced_acquire", r)
	}
	if token != fencedNone {
		return true, 0, token, nil
	}
	return false, holderPTTL(ms), 0, nil
}

// explain completes err, a fair lock's *lockbridge.NotObtainedError, with what kept
// field out: the holder's lease and the queue's head when it is another
// waiter (a dead waiter's entry blocks the lock, free or not, until its
// timeout). Reads (PTTL, LINDEX, ZSCORE) on a detached context, best
// effort: they explain, they decide nothing.
func (l *Locker) explain(ctx context.Context, n *names, field string, err error) {
	var ne *lockbridge.NotObtainedError
	if !l.cfg.fair || !errors.As(err, &ne) {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	// The fair acquire's reply is the lock's PTTL or, for a waiter that
	// just queued, the time left before the previous waiter's timeout;
	// fair_try replies no time at all. Read the holder's.
	if r, err := l.c.Do(rctx, "PTTL", n.key); err == nil {
		if ms, ok := r.(int64); ok {
			switch {
			case ms == -2:
				ne.HolderTTL = 0 // nobody holds it
			case ms >= 0:
				ne.HolderTTL = holderPTTL(ms)
			default:
				ne.HolderTTL = -1
			}
		}
	}
	r, err := l.c.Do(rctx, "LINDEX", n.queue, "0")
	head, ok := r.(string)
	if err != nil || !ok || head == field {
		return
	}
	// The waiter at the head goes first, even with the lock free; one
	// that died keeps its place until its timeout, by the waiters' clocks.
	ne.Detail = "a queued waiter is ahead (" + strconv.Quote(head)
	if r, err := l.c.Do(rctx, "ZSCORE", n.timeouts, head); err == nil {
		if ms, err := strconv.ParseFloat(fmt.Sprint(r), 64); err == nil && r != nil {
			ne.Detail += ", keeping its place until " + time.UnixMilli(int64(ms)).UTC().Format(
				"2006-01-02T15:04:05.000Z07:00") + " if it does not take its turn"
		}
	}
	ne.Detail += ")"
}

// leave takes field out of a fair lock's queue after a Lock call that
// gave up (Redisson's acquireFailed), best effort, on a detached context:
// else the waiters behind it wait for its timeout.
func (l *Locker) leave(ctx context.Context, n *names, field string, wait time.Duration) {
	if wait == 0 {
		return
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	a := fairDequeueArgs{queue: n.queue, timeouts: n.timeouts, field: field, wait: wait}
	_, _ = l.c.Eval(uctx, fairDequeueScript, a.keys(), a.argv()...)
}

// release runs the unlock for field with unlock request id reqID (again:
// the request was sent before and its reply never came): nil (field
// absent), releaseKept (a hold left), releaseDone (released; with WithFair
// also when the key was gone), or releaseLatchGone (sent again, and the
// first run's answer, its latch, is gone: unknown, nothing done).
func (l *Locker) release(ctx context.Context, n *names, field string, ttl time.Duration, reqID string,
	again bool) (any, error) {
	latch := n.latch + ":" + reqID
	if l.cfg.fair {
		a := fairReleaseArgs{key: n.key, queue: n.queue, timeouts: n.timeouts, channel: n.channel, latch: latch,
			field: field, lease: ttl, now: time.Now().UnixMilli(), publish: l.publishCommand(),
			latchLife: l.cfg.latch, again: again}
		return l.c.Eval(ctx, fairReleaseScript, a.keys(), a.argv()...)
	}
	a := releaseArgs{key: n.key, channel: n.channel, latch: latch, field: field, lease: ttl,
		publish: l.publishCommand(), latchLife: l.cfg.latch, again: again}
	return l.c.Eval(ctx, releaseScript, a.keys(), a.argv()...)
}

// forceUnlock deletes the lock and wakes a waiter.
func (l *Locker) forceUnlock(ctx context.Context, n *names) (any, error) {
	if l.cfg.fair {
		a := fairForceUnlockArgs{key: n.key, queue: n.queue, timeouts: n.timeouts, channel: n.channel,
			now: time.Now().UnixMilli(), publish: l.publishCommand()}
		return l.c.Eval(ctx, fairForceUnlockScript, a.keys(), a.argv()...)
	}
	a := forceUnlockArgs{key: n.key, channel: n.channel, publish: l.publishCommand()}
	return l.c.Eval(ctx, forceUnlockScript, a.keys(), a.argv()...)
}

// wakeChannel is the channel a waiter of field listens on: the lock's, or
// with WithFair the waiter's own.
func (l *Locker) wakeChannel(n *names, field string) string {
	if l.cfg.fair {
		return waiterChannel(n.key, field)
	}
	return n.channel
}
