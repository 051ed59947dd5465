// Package retry is the waiting loop behind every Locker.Lock in this module:
// attempt, and when the lock is held, wait for the backoff's delay — never
// longer than the holder has left, and no longer at all once a release
// notification arrives — until the lock is obtained or the context ends.
package retry
