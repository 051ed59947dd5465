-- redisson/scripts/fair_acquire.lua: one attempt on a Redisson-compatible
-- fair lock (RedissonFairLock) by a waiter, which joins the line when it
-- cannot take the lock: tryLock(wait) and lock(). Assembled after the
-- fragments args.lua and redisson_queue.lua.
--
-- KEYS[1]  the lock name: a HASH, owner field -> hold count
-- KEYS[2]  the waiters' line "redisson_lock_queue:{name}" (a LIST)
-- KEYS[3]  their timeouts "redisson_lock_timeout:{name}" (a ZSET)
-- ARGV[1]  the lease in ms (1 to 2^53)
-- ARGV[2]  the owner's field (not empty)
-- ARGV[3]  the wait in ms (0 to 2^53)
-- ARGV[4]  now, in ms of this client's clock (0 to 2^53)
--
-- Takes the lock as fair_try.lua does (the others' timeouts move up by
-- ARGV[3]), or re-enters, replying nil. Otherwise:
--   - the owner is in the line already (it has a timeout): reply the
--     lock's PTTL, at least 0;
--   - else it joins the line at the back with the timeout "the last
--     waiter's timeout (or, with nobody else waiting, now + the lock's
--     PTTL) + ARGV[3]", and the reply is that timeout less ARGV[3] and now:
--     how long to wait before the next attempt.
arg_count(4)
local lease = arg_int(1, 1, 9007199254740992)
local field = arg_nonempty(2)
local wait = arg_int(3, 0, 9007199254740992)
local now = arg_int(4, 0, 9007199254740992)
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]

queue_prune(queue, timeouts, now)
if redis.call('EXISTS', lock) == 0 then
  local head = redis.call('LINDEX', queue, 0)
  if not head or head == field then
    queue_take(lock, queue, timeouts, field, wait, lease)
    return false
  end
elseif redis.call('HEXISTS', lock, field) == 1 then
  redis.call('HINCRBY', lock, field, 1)
  redis.call('PEXPIRE', lock, lease)
  return false
end

if redis.call('ZSCORE', timeouts, field) then
  return math.max(0, redis.call('PTTL', lock))
end
local before = redis.call('LINDEX', queue, -1)
local before_until = before and before ~= field and redis.call('ZSCORE', timeouts, before)
local left
if before_until then
  left = tonumber(before_until) - now
else
  left = redis.call('PTTL', lock)
end
if redis.call('ZADD', timeouts, string.format('%.0f', left + wait + now), field) == 1 then
  redis.call('RPUSH', queue, field)
end
return left
