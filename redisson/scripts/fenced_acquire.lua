-- redisson/scripts/fenced_acquire.lua: acquire.lua for a fenced lock
-- (Redisson's RFencedLock), handing out a token with every acquire,
-- re-entries too. Assembled after the fragments args.lua and
-- modern_fence.lua.
--
-- KEYS[1]  the lock name: a HASH, owner field -> hold count
-- KEYS[2]  the token counter "redisson_lock_token:{name}" (a string)
-- ARGV[1]  the lease in ms (1 to 2^53)
-- ARGV[2]  the owner's field, "<client id>:<owner id>" (not empty)
--
-- Replies {-1, token} when the lock was free or the owner's: the token is
-- max(counter + 1, the server's TIME in µs), written back to the counter
-- (modern_fence), then the hold is counted as acquire.lua counts it.
-- Replies {pttl, -1} when another owner holds it (pttl -1: no expiry);
-- nothing is written. The -1 of each, the half that does not apply, is
-- named in Go (redisson/calls.go):
--   fencedNone = -1  no PTTL (acquired), or no token (held by another)
-- Java's RedissonFencedLock INCRs the same counter, so its tokens follow
-- Go's; the clock floor keeps the tokens Go hands out increasing across a
-- restart without persistence or a failover to a replica that lags (Java's
-- INCR alone starts again from what is left).
-- Errors, with nothing written: a bad argument; an unusable counter
-- (FENCE …); KEYS[1] of another type (WRONGTYPE).
arg_count(2)
local lease = arg_int(1, 1, 9007199254740992)
local field = arg_nonempty(2)
local lock = KEYS[1]

if redis.call('EXISTS', lock) == 1 and redis.call('HEXISTS', lock, field) == 0 then
  return {redis.call('PTTL', lock), -1}
end
redis.replicate_commands() -- TIME before the writes (Redis 5 and 6)
local token = modern_fence(KEYS[2])
redis.call('HINCRBY', lock, field, 1)
redis.call('PEXPIRE', lock, lease)
return {-1, token}
