// Package notify is the release-notification hub the lock packages share
// (modern now; legacy, migrate and redlock may use it too): waiters of
// Locker.Lock wake as soon as the holder's release script publishes on the
// key's release channel, instead of polling.
//
// One Hub serves one Locker. It holds at most one driver.Subscription (which,
// in Redis Cluster, is one SSUBSCRIBE connection per hash slot in use),
// shared by every waiter of that Locker: opened on the first Wait, subscribed
// to the channels that have waiters, unsubscribed from a channel when its
// last waiter leaves, and closed when no waiter is left. With Linger, a
// channel whose last waiter left stays subscribed for the linger (at most
// MaxLingering channels at once), and the subscription open while one does:
// a Wait on it meanwhile sends nothing. So a Hub runs no goroutine while
// nobody waits, or, with a linger, from the linger's end on; Close stops
// them at once.
//
// A waiter that takes a Mark (Since) before an attempt and passes it to
// WaitFrom after the attempt failed learns whether the channel was
// subscribed, without a lapse, all along: then a release after the mark was
// heard (and wakes it), and no second attempt is needed. Notices counts the
// notices since a mark; the lock packages use it, with Lost and SetLine, to
// order their waiters' attempts across processes.
//
// A waiter calls Wait after a failed attempt and before its next one: Wait
// returns once the server has confirmed the subscription, so a release that
// happens after that attempt is never missed. A release wakes one waiter of
// its channel per Hub — they all want the same key, and only one can have it
// — and a waiter that leaves with a wake it has not acted on passes it to
// another. When subscribing fails — no
// pub/sub rights under an ACL, the server refuses or is unreachable, the
// subscription takes longer than the subscribe timeout — Wait returns the
// error and the waiter polls (its backoff, bounded by the holder's remaining
// time, still applies); the Hub does not try again before the retry
// interval has passed, and then resubscribes every channel that has waiters
// and wakes them. When an open subscription is lost, every waiter is woken
// once (it may have missed a release) and polls until a later Wait
// resubscribes.
//
// Channels are named by Channel; releases publish with the command
// PublishCommand returns, from inside the release script, with the channel in
// the script's KEYS. The payload is not interpreted: any message wakes.
package notify
