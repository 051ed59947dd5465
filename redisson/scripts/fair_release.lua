-- redisson/scripts/fair_release.lua: release.lua for a Redisson-compatible
-- fair lock (RedissonFairLock): the last hold's unlock wakes the head of
-- the line on its own channel. Assembled after the fragments args.lua and
-- redisson_queue.lua.
--
-- KEYS[1]  the lock name: a HASH, owner field -> hold count
-- KEYS[2]  the waiters' line "redisson_lock_queue:{name}" (a LIST)
-- KEYS[3]  their timeouts "redisson_lock_timeout:{name}" (a ZSET)
-- KEYS[4]  the lock's channel "redisson_lock__channel:{name}"
-- KEYS[5]  this request's unlock latch "redisson_unlock_latch:{name}:<id>"
-- ARGV[1]  the owner's field (not empty)
-- ARGV[2]  the lease in ms (1 to 2^53) the lock keeps when a hold is left
-- ARGV[3]  now, in ms of this client's clock (0 to 2^53)
-- ARGV[4]  'PUBLISH', or 'SPUBLISH' in a cluster
-- ARGV[5]  the latch's life in ms (1 to 2^53)
-- ARGV[6]  '0' the first time this request is sent, '1' when sent again
--
-- The latch is read first, as in release.lua. Then the line is pruned
-- (queue_prune).
-- Replies, the codes named as in Go (redisson/calls.go), kept in the
-- latch but the last:
--   releaseKept      =  0  the count goes down and stays above 0: the
--                          lease is set
--   releaseDone      =  1  the count reaches 0: the key is deleted and the
--                          head of the line is woken ("0" on
--                          "<KEYS[4]>:<head field>"); or the key is absent:
--                          the head of the line is woken
--   releaseLatchGone = -1  a request sent again whose latch is gone:
--                          nothing changed
-- Replies nil when the hash has no such field.
-- Replying 1 for an absent key is RedissonFairLock's answer; the Go caller
-- tells that case apart with a look at its field first.
arg_count(6)
local field = arg_nonempty(1)
local lease = arg_int(2, 1, 9007199254740992)
local now = arg_int(3, 0, 9007199254740992)
local publish = arg_one_of(4, 'PUBLISH', 'SPUBLISH')
local latch_life = arg_int(5, 1, 9007199254740992)
local again = arg_flag(6)
local lock, queue, timeouts, channel, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

local kept = redis.call('GET', latch)
if kept then
  return tonumber(kept)
end
if again then
  return -1
end
queue_prune(queue, timeouts, now)
local reply = 1
if redis.call('EXISTS', lock) == 1 then
  if redis.call('HEXISTS', lock, field) == 0 then
    return false
  end
  if redis.call('HINCRBY', lock, field, -1) > 0 then
    redis.call('PEXPIRE', lock, lease)
    reply = 0
  else
    redis.call('DEL', lock)
  end
end
if reply == 1 then
  queue_wake_head(queue, channel, publish)
end
redis.call('SET', latch, reply, 'PX', latch_life)
return reply
