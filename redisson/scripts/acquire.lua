-- redisson/scripts/acquire.lua: take a Redisson-compatible lock (RLock) for
-- one owner, or take it again (a reentrant hold). Assembled after the
-- fragment args.lua.
--
-- KEYS[1]  the lock name: a HASH, owner field -> hold count
-- ARGV[1]  the lease in ms (1 to 2^53)
-- ARGV[2]  the owner's field, "<client id>:<owner id>" (not empty)
--
-- The lock is free when the key is absent; it is the owner's when the hash
-- has its field. Either way the field's count goes up by one and the whole
-- lock's lease is set to ARGV[1], and the reply is nil. Held by another
-- owner: nothing is written and the reply is the key's PTTL (-1: no expiry).
-- This is what RedissonLock's acquire does on the same data, so Java and Go
-- holders exclude each other and count their holds alike.
arg_count(2)
local lease = arg_int(1, 1, 9007199254740992)
local field = arg_nonempty(2)
local lock = KEYS[1]

if redis.call('EXISTS', lock) == 1 and redis.call('HEXISTS', lock, field) == 0 then
  return redis.call('PTTL', lock)
end
redis.call('HINCRBY', lock, field, 1)
redis.call('PEXPIRE', lock, lease)
return false
