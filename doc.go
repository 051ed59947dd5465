// Package lockbridge holds what every lock scheme in this module has in common:
// the Locker and Lock interfaces, the errors they return, and the waiting
// strategies (Backoff) that Locker.Lock uses between attempts.
//
// The schemes live in their own packages and are interchangeable behind these
// interfaces:
//
//   - legacy: the Java SETNX + GETSET timestamp lock, byte for byte;
//   - modern: SET NX PX with owner-checked release, auto-refresh and fencing;
//   - migrate: the phased dual-write/dual-read lock that moves a fleet from
//     legacy to modern without a flag day;
//   - redlock: the modern lock on a majority of independent masters.
//
// None of them imports a Redis client library: they talk to Redis through
// driver.Client, with adapters for go-redis (driver/goredis), redigo
// (driver/redigoadapter), rueidis (driver/rueidisadapter) and valkey-go
// (driver/valkeyadapter; these two are Go modules of their own).
//
// Errors are sentinels to test with errors.Is: ErrNotObtained when another
// holder has the lock, ErrNotHeld when a Refresh or Unlock finds the lock no
// longer ours, ErrLost when a lock is known lost while held, and ErrInvalid for
// bad arguments. Redis and network errors are wrapped and returned as they are,
// never disguised as ErrNotObtained.
package lockbridge
