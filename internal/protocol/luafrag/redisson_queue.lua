-- redisson_queue.lua: the waiters' line of a Redisson-compatible fair lock
-- (package redisson, WithFair). Needs no other fragment.
--
-- The line is two keys in the lock's slot: a LIST of the waiters' fields in
-- arrival order ("redisson_lock_queue:{name}") and a ZSET scoring each
-- field with the time, in ms of the waiters' own clocks, after which the
-- waiter counts as gone ("redisson_lock_timeout:{name}"). The layout and
-- the rules below are RedissonFairLock's (Redisson 3.24 and later, 4.x),
-- so Java and Go waiters stand in one line.
--
--   queue_prune(queue, timeouts, now) -> drops waiters from the head of the
--     line while the head's timeout is at or below now; stops at the first
--     head without a timeout or with a later one.
--   queue_wake_head(queue, channel, publish) -> publishes Redisson's unlock
--     message "0" on "<channel>:<head field>" with publish ('PUBLISH' or
--     'SPUBLISH'); nothing when the line is empty.
--   queue_shift(timeouts, by) -> takes by ms off every timeout in the ZSET:
--     a waiter left the head of the line, and those behind move up.
--   queue_take(lock, queue, timeouts, field, wait, lease) -> field, at the
--     head of the line or with nobody waiting, takes the free lock: it
--     leaves the line, those behind move up by wait, and the hash is made
--     with its count 1 and the lease in ms.

local function queue_prune(queue, timeouts, now)
  while true do
    local head = redis.call('LINDEX', queue, 0)
    if not head then
      return
    end
    local until_ms = redis.call('ZSCORE', timeouts, head)
    if not until_ms or tonumber(until_ms) > now then
      return
    end
    redis.call('ZREM', timeouts, head)
    redis.call('LPOP', queue)
  end
end

local function queue_wake_head(queue, channel, publish)
  local head = redis.call('LINDEX', queue, 0)
  if head then
    redis.call(publish, channel .. ':' .. head, '0')
  end
end

local function queue_shift(timeouts, by)
  local waiting = redis.call('ZRANGE', timeouts, 0, -1)
  for i = 1, #waiting do
    redis.call('ZINCRBY', timeouts, -by, waiting[i])
  end
end

local function queue_take(lock, queue, timeouts, field, wait, lease)
  redis.call('LPOP', queue)
  redis.call('ZREM', timeouts, field)
  queue_shift(timeouts, wait)
  redis.call('HSET', lock, field, 1)
  redis.call('PEXPIRE', lock, lease)
end
