-- redisson/scripts/fair_dequeue.lua: a waiter of a Redisson-compatible fair
-- lock leaves the line (it gave up: Redisson's acquireFailed). Assembled
-- after the fragment args.lua.
--
-- KEYS[1]  the waiters' line "redisson_lock_queue:{name}" (a LIST)
-- KEYS[2]  their timeouts "redisson_lock_timeout:{name}" (a ZSET)
-- ARGV[1]  the leaving owner's field (not empty)
-- ARGV[2]  its wait in ms (0 to 2^53)
--
-- The waiters behind it in the line move up: their timeouts go down by
-- ARGV[2]. Then its timeout and every entry of it in the line are removed.
-- A field not in the line moves no one. Returns nil.
arg_count(2)
local field = arg_nonempty(1)
local wait = arg_int(2, 0, 9007199254740992)
local queue, timeouts = KEYS[1], KEYS[2]

local line = redis.call('LRANGE', queue, 0, -1)
local behind = false
for i = 1, #line do
  if behind then
    redis.call('ZINCRBY', timeouts, -wait, line[i])
  elseif line[i] == field then
    behind = true
  end
end
redis.call('ZREM', timeouts, field)
redis.call('LREM', queue, 0, field)
return false
