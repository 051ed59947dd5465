// Package legacy takes the same Redis locks, byte for byte, as Java services
// that use the SETNX + GETSET timestamp lock (Spring RedisTemplate snippets,
// jedis-lock and their copies): a Go service using a Locker and a Java
// service locking the same name exclude each other, and the Java side never
// reads a value it cannot parse.
//
// # The scheme
//
// The lock key holds the holder's expiry, a timestamp, and no TTL. The Java
// side does:
//
//	now   = System.currentTimeMillis()
//	value = String.valueOf(now + leaseMillis + 1)
//	if SETNX key value == 1                 -> acquired
//	v = GET key;  if v != null and Long.parseLong(v) < now:
//	    old = GETSET key value
//	    acquired iff old != null and Long.parseLong(old) < now
//	release: if System.currentTimeMillis() < ownExpiry: DEL key
//
// docs/protocol.md lists every byte and script this package sends.
//
// # Profiles
//
// How a given Java service writes its lock is a Profile, set with options:
// the unit (WithUnit: milliseconds, or seconds as in the redis.io recipe),
// whether it adds 1 (WithPlusOne), the key codec (WithKeyCodec: the name's
// raw bytes, or a JDK-serialized java.lang.String as Spring Boot's default
// RedisTemplate writes keys) and the value codec (WithValueCodec: ASCII
// decimal, JDK-serialized String or Long, JSON string or number). The Go
// side must use the profile of the Java services it shares locks with: two
// services that serialize the "same" name differently lock different keys.
//
// # Modes
//
// The atomic mode (the default) acquires with one Lua script: SETNX, else decode
// the stored value strictly and take it over only if it has expired. An
// uncontended acquire and an expired takeover each cost one round trip,
// and Go never overwrites a live value (a Java loser's GETSET does; see
// below). The classic mode (WithClassic) sends the Java commands literally — SETNX, GET,
// GETSET — for servers with scripting disabled and for byte-level parity;
// unlike the Java seed, it treats a nil GETSET reply as acquired (our
// GETSET created the key), so it never leaves a phantom lock.
//
// # Expiry and foreign values
//
// A stored value has expired when it is below now, strictly, in the
// profile's unit, by the local clock (WithClock; the Java side judges by its
// own clock too). Values are decoded strictly: an optional sign and 1 to 19
// ASCII digits in the int64 range — what Long.parseLong accepts, minus
// non-ASCII digits and runs of leading zeros beyond 19 digits, which no
// Java writer produces. A value that does not decode ("uuid:millis", a
// float, a JSON array, another codec's bytes) is a foreign lock: never
// expired, never taken over; TryLock returns an error wrapping both
// lockbridge.ErrNotObtained and a *ForeignValueError that shows the bytes.
// A key holding another type (a list, say) fails with Redis' WRONGTYPE
// error, wrapped (driver.HasPrefix(err, "WRONGTYPE")).
//
// # Release and refresh: the owner window
//
// In the atomic mode, Unlock deletes the key, and Refresh rewrites it with a new
// expiry, in one script each, only if the stored value decodes to T with
// |T − W| ≤ lease/2 (W being the expiry we wrote) and our own clock, read
// just before the script is sent, has not reached W: now < W, exactly the
// Java seed's release condition. The window is there because a Java
// contender that loses a takeover race has already overwritten W with its
// own timestamp, near W; an exact compare would leave the key stuck until
// that timestamp. A legitimate successor takes over only once W is below
// its clock and writes an expiry above W plus its lease; the clock
// condition keeps a late release — a holder paused past its lease — from
// deleting it even when that value falls inside the window. Such a late
// Unlock or Refresh returns an error wrapping lockbridge.ErrNotHeld and
// leaves the key as it is, even when it holds exactly our bytes (a
// contender of the same lease whose clock read what ours read writes those
// very bytes).
//
// The server's clock never permits anything. The scripts also read TIME,
// but only to refuse: when the server's clock is past W by more than a
// margin (WithServerClockMargin, 2 s by default), the
// script ran long after we decided — a pause or a stalled connection in
// between — and a successor may hold the lock. A server clock ahead of ours
// by less than the margin causes no false loss. What is left: a script that
// runs within the margin after W, plus as much again as the server's clock
// is behind ours, acts on a decision made before W; a successor with a
// lease under half ours can be hit in that span.
//
// After our own release, a successor may take over at once with a value
// inside the window: so a lock never sends a second release or refresh once
// it has released, and after an error that leaves it unknown whether a
// release or refresh reached Redis (a timeout, a cancelled context) the
// lock ends as lost rather than try again. In the classic mode, Unlock deletes
// the key as the Java seed does, when the local clock says W has not
// passed; Refresh uses GET and GETSET.
//
// # Clock skew
//
// Expiry is judged by the taker's clock, as on the Java side: a taker whose
// clock runs ahead of the holder's takes over early, by the skew.
// WithSkewMargin(d) (default 0, Java's own rule) takes an expired value
// over only when it is below now − d: with d at least the largest skew
// between this host and the other lockers, a Go locker never takes over a
// lock whose holder's own clock says it is live. The Java lockers
// themselves cannot be given a margin; skew among them is the Java scheme's
// own limit.
//
// # The Lock
//
// Token is the expiry written, as ASCII decimal in the unit, whatever the
// codec; ExpiresAt is that expiry as a time; the *Lock also gives Expiry,
// Value (the exact bytes) and RedisKey. Nothing refreshes a legacy lock
// automatically, as nothing does on the Java side: Done is closed by
// Unlock (Err nil), by an Unlock or Refresh that finds the lock no longer
// ours, or at the end of its lease — W by the local clock, minus a twelfth
// of the lease — by a timer nothing in flight can delay (Err then wraps
// lockbridge.ErrLost and says the lease ran out). A Refresh to a shorter
// ttl shortens the local lease when it is sent. Unlock and Refresh on a nil
// *Lock return an error wrapping lockbridge.ErrNotHeld.
//
// Lock waits between attempts as the backoff says (WithBackoff; by default
// exponential from 10 ms to 100 ms, the Java poll interval), never past the
// expiry it has just read, so a crashed holder is taken over as soon as its
// lease ends. Java releasers send no notification, so legacy waiting polls.
//
// # Safety TTL
//
// WithSafetyTTL (off by default) puts a TTL, at least twice the lease, on
// every value this package writes, so that lock keys with dynamic names do
// not accumulate forever. It is invisible to the Java side's logic, but a
// Java takeover (GETSET) wipes it.
//
// # Limits
//
// This is an efficiency lock, not a correctness lock. Expiry is judged by
// each client's clock, so clocks must agree to well under the lease; a
// holder must finish well within its lease; a loser's GETSET makes the
// effective expiry drift by the loser's clock; a Redis failover can lose
// the lock. Java peers still leave phantom locks on a nil GETSET (liveness
// only, bounded by their lease). Lua numbers are doubles: values are exact
// up to 2^53 (every millisecond timestamp until the year 287396); 19-digit
// values are compared with double precision inside scripts.
//
// # For other packages
//
// Profile exposes what the migrate package and the CLI need to speak the
// same protocol: EncodeKey, EncodeValue, DecodeValue, Expiry, Expired,
// Cutoff, OwnerArgs, and CodecID and UnitID, the arguments of the shared Lua
// fragments in internal/protocol/luafrag (args.lua, legacy_decode.lua,
// legacy_args.lua, legacy_expired.lua, legacy_now.lua, legacy_owner.lua)
// that this package's scripts are built on. Every script checks each of its
// arguments in its exact form before it touches a key. Each
// ValueCodec also encodes and decodes on its own (ValueCodecs lists them).
package legacy
