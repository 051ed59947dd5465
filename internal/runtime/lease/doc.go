// Package lease is the local life of one held lock, shared by the lock
// packages (legacy, modern, redlock and migrate's dual phases): when the
// lease ends by the local monotonic clock, whether the lock has ended —
// released cleanly or lost — with the Done channel and Err that
// lockbridge.Lock exposes, and the auto-refresh loop that keeps a lease
// alive and declares it lost when it cannot (legacy uses only the end: a
// legacy lock is never refreshed automatically, and its lease ends at the
// expiry it wrote, by the other lockers' clocks).
//
// A Lease knows nothing of Redis: the lock package supplies the refresh as a
// callback (one attempt on one node for modern, a quorum of attempts for
// Redlock, both keys for migrate's dual-write phase). The callback reports
// "no longer ours" with an error wrapping lockbridge.ErrNotHeld and calls
// Extend when it succeeds.
//
// The refresh schedule, for a lease of ttl:
//
//   - refresh every ttl/3, counted from the start of the lease and then from
//     the last success;
//   - each refresh call gets a deadline no later than ttl/3 and no later than
//     the give-up point below, and is cancelled at once by StopRefresh;
//   - a refresh that fails with an error wrapping ErrNotHeld ends the lease
//     as lost at once;
//   - after any other failure, retry every ttl/12;
//   - when no refresh has succeeded by the give-up point, ttl/12 before the
//     lease ends by the local clock, end the lease as lost. The lease end is
//     counted from when the last successful refresh was sent, so the holder
//     hears of the loss before the server can let another holder in.
package lease
