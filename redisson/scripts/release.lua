-- redisson/scripts/release.lua: give back one hold of a Redisson-compatible
-- lock, answering a repeated request from its unlock latch. Assembled after
-- the fragment args.lua.
--
-- KEYS[1]  the lock name: a HASH, owner field -> hold count
-- KEYS[2]  the lock's channel "redisson_lock__channel:{name}"
-- KEYS[3]  this request's unlock latch "redisson_unlock_latch:{name}:<id>"
-- ARGV[1]  the owner's field (not empty)
-- ARGV[2]  the lease in ms (1 to 2^53) the lock keeps when a hold is left
-- ARGV[3]  'PUBLISH', or 'SPUBLISH' in a cluster
-- ARGV[4]  the latch's life in ms (1 to 2^53)
-- ARGV[5]  '0' the first time this request is sent, '1' when it is sent
--          again because the first reply never came
--
-- Replies, the codes named as in Go (redisson/calls.go); the first two
-- are kept in the latch for ARGV[4] ms:
--   releaseKept      =  0  the owner's count went down and is still above
--                          0: the lease is set to ARGV[2]
--   releaseDone      =  1  the count reached 0: the key is deleted and "0"
--                          (Redisson's unlock message) is published on
--                          KEYS[2], waking Java and Go waiters
--   releaseLatchGone = -1  a request sent again (ARGV[5] '1') whose latch
--                          is gone — expired, or evicted under memory
--                          pressure —, changing nothing: whether the first
--                          run happened is unknown, and running the release
--                          again could take a second hold
-- Replies nil, keeping nothing, when the hash has no such field.
-- A latch that exists is an earlier run of this request: its value is the
-- reply, and nothing else is done.
-- The keys, the message, the latch's name and values are Redisson's
-- (RedissonLock's unlock, 3.24 and later): Java and Go unlock alike.
arg_count(5)
local field = arg_nonempty(1)
local lease = arg_int(2, 1, 9007199254740992)
local publish = arg_one_of(3, 'PUBLISH', 'SPUBLISH')
local latch_life = arg_int(4, 1, 9007199254740992)
local again = arg_flag(5)
local lock, channel, latch = KEYS[1], KEYS[2], KEYS[3]

local kept = redis.call('GET', latch)
if kept then
  return tonumber(kept)
end
if again then
  return -1
end
if redis.call('HEXISTS', lock, field) == 0 then
  return false
end
local reply = 1
if redis.call('HINCRBY', lock, field, -1) > 0 then
  redis.call('PEXPIRE', lock, lease)
  reply = 0
else
  redis.call('DEL', lock)
  redis.call(publish, channel, '0')
end
redis.call('SET', latch, reply, 'PX', latch_life)
return reply
