-- redisson/scripts/renew.lua: the watchdog's renewal (and Refresh) of a
-- Redisson-compatible lock. Assembled after the fragment args.lua.
--
-- KEYS[1]  the lock name: a HASH, owner field -> hold count
-- ARGV[1]  the lease in ms (1 to 2^53)
-- ARGV[2]  the owner's field (not empty)
--
-- Replies, the codes named as in Go (redisson/calls.go):
--   renewed   = 1  the hash has the owner's field: the whole lock's lease
--                  is set to ARGV[1]
--   renewGone = 0  it has not (the hold is gone): nothing is written
-- Redisson's watchdog does the same per lock (it batches the locks of one
-- client in one script; lockbridge sends one lock per call).
arg_count(2)
local lease = arg_int(1, 1, 9007199254740992)
local field = arg_nonempty(2)

if redis.call('HEXISTS', KEYS[1], field) == 0 then
  return 0
end
redis.call('PEXPIRE', KEYS[1], lease)
return 1
