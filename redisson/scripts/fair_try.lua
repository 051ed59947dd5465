-- redisson/scripts/fair_try.lua: one attempt on a Redisson-compatible fair
-- lock (RedissonFairLock) that never joins the line: tryLock() without a
-- wait. Assembled after the fragments args.lua and redisson_queue.lua.
--
-- KEYS[1]  the lock name: a HASH, owner field -> hold count
-- KEYS[2]  the waiters' line "redisson_lock_queue:{name}" (a LIST)
-- KEYS[3]  their timeouts "redisson_lock_timeout:{name}" (a ZSET)
-- ARGV[1]  the lease in ms (1 to 2^53)
-- ARGV[2]  the owner's field (not empty)
-- ARGV[3]  now, in ms of this client's clock (0 to 2^53)
-- ARGV[4]  the lock's fair wait in ms (0 to 2^53): what the waiters left
--          behind move up by when the head of the line takes the lock
--
-- First drops the waiters whose timeout is at or below now from the head
-- of the line (queue_prune). Then:
--   - the key is absent and the line empty or headed by this owner: the
--     owner leaves the line, the other timeouts move up by ARGV[4], the
--     hash is made with the owner's count 1 and the lease; reply nil;
--   - the hash has the owner's field: its count goes up by one, the lease
--     is set; reply nil;
--   - otherwise reply 1: held by another owner, or others wait first.
-- Replies, the code named as in Go (redisson/calls.go):
--   fairTryRefused = 1  not taken: held by another owner, or others wait
--                       first
--
-- The clocks order the line; they never admit anyone (only an absent key
-- does).
arg_count(4)
local lease = arg_int(1, 1, 9007199254740992)
local field = arg_nonempty(2)
local now = arg_int(3, 0, 9007199254740992)
local wait = arg_int(4, 0, 9007199254740992)
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]

queue_prune(queue, timeouts, now)
if redis.call('EXISTS', lock) == 0 then
  local head = redis.call('LINDEX', queue, 0)
  if head and head ~= field then
    return 1
  end
  queue_take(lock, queue, timeouts, field, wait, lease)
  return false
end
if redis.call('HEXISTS', lock, field) == 0 then
  return 1
end
redis.call('HINCRBY', lock, field, 1)
redis.call('PEXPIRE', lock, lease)
return false
