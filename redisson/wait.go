package redisson

import "context"

// waiter is one Lock call's part in the Locker's shared subscription.
type waiter struct {
	l       *Locker
	channel string
	wake    chan struct{} // nil: no notifications, wait by backoff only
	release func()        // set once subscribed (or once subscribing failed)
}

// waiter returns the waiter of a Lock call of field on n: one that listens
// when notifications are on and the backoff allows a second attempt.
func (l *Locker) waiter(n *names, field string) *waiter {
	w := &waiter{l: l, channel: l.wakeChannel(n, field)}
	if _, again := l.cfg.backoff.Delay(1); again && l.cfg.notify {
		w.wake = make(chan struct{}, 1)
	}
	return w
}

// subscribe is called after each attempt: after the first one that found
// the lock held, it subscribes to the lock's channel and reports true once
// the server confirmed, so the caller attempts again at once and no unlock
// published in between is missed. Failing to subscribe, it reports false
// and the waiter waits by backoff and lease.
func (w *waiter) subscribe(ctx context.Context, attempt error) bool {
	if w.wake == nil || w.release != nil || !isNotObtained(attempt) || ctx.Err() != nil {
		return false
	}
	release, err := w.l.hub.Wait(ctx, w.channel, w.wake)
	w.release = release
	return err == nil
}

// close leaves the subscription.
func (w *waiter) close() {
	if w.release != nil {
		w.release()
	}
}
