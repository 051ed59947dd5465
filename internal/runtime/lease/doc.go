// Package lease is the local life of one held lock, shared by the lock
// packages (legacy, modern, redisson, redlock and migrate): when the lease
// ends by the local monotonic clock, whether the lock has ended — released
// cleanly or lost — with the Done channel and Err that lockbridge.Lock
// exposes, and the auto-refresh loop that keeps a lease alive (legacy has
// none: a legacy lock is never refreshed automatically, and its lease ends
// at the expiry W it wrote, by its own clock; the other lockers take over
// once theirs pass W).
//
// A Lease knows nothing of Redis: the lock package supplies the refresh as a
// callback (one attempt on one node for modern, a quorum of attempts for
// Redlock, both keys for migrate's dual-write phase). The callback reports
// "no longer ours" with an error wrapping lockbridge.ErrNotHeld and calls
// Extend when it succeeds.
//
// The loss signal is a timer. The local lease ends at the send time of the
// last confirmed grant (the acquire, or a refresh whose success came back)
// plus its ttl; Init arms a timer that ends the lease as lost at the
// give-up point, ttl/12 before that end, whether or not anything refreshes
// the lock. Nothing in flight can delay it: the timer takes only the
// Lease's own mutex, under which nothing blocks, and closes Done before it
// reports the loss. A call in flight may shorten the lease, never hold it
// open: Sending, called before every refresh is sent, shortens the lease to
// min(its end, send + ttl), since a shorter ttl may take effect whether or
// not its reply comes. A lease whose give-up point has passed is over:
// Extend refuses to revive it. Rounds serialises the refresh rounds so that
// the auto-refresh never waits behind a Refresh by hand (a hung call cannot
// hold it).
//
// The refresh schedule, for a lease of ttl:
//
//   - refresh every ttl/3, counted from the start of the lease and then from
//     the last success;
//   - each refresh call gets a deadline no later than ttl/3 and no later than
//     the give-up point, and is cancelled at once by StopRefresh;
//   - a refresh that fails with an error wrapping ErrNotHeld ends the lease
//     as lost at once;
//   - after any other failure, retry every ttl/12;
//   - when no refresh has succeeded by the give-up point, the timer ends the
//     lease as lost (Err names the last failure). The lease end is counted
//     from when the last successful refresh was sent, so the holder hears
//     of the loss before the server can let another holder in.
package lease
