-- redisson/scripts/fair_force_unlock.lua: free a Redisson-compatible fair
-- lock whoever holds it, waking the head of the line. Assembled after the
-- fragments args.lua and redisson_queue.lua.
--
-- KEYS[1]  the lock name
-- KEYS[2]  the waiters' line "redisson_lock_queue:{name}" (a LIST)
-- KEYS[3]  their timeouts "redisson_lock_timeout:{name}" (a ZSET)
-- KEYS[4]  the lock's channel "redisson_lock__channel:{name}"
-- ARGV[1]  now, in ms of this client's clock (0 to 2^53)
-- ARGV[2]  'PUBLISH', or 'SPUBLISH' in a cluster
--
-- Prunes the line (queue_prune).
-- Replies, the codes named as in Go (redisson/calls.go):
--   forceDeleted = 1  the key existed: it is deleted and the head of the
--                     line woken ("0" on "<KEYS[4]>:<head>")
--   forceAbsent  = 0  there was no key: no message
arg_count(2)
local now = arg_int(1, 0, 9007199254740992)
local publish = arg_one_of(2, 'PUBLISH', 'SPUBLISH')

queue_prune(KEYS[2], KEYS[3], now)
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
queue_wake_head(KEYS[2], KEYS[4], publish)
return 1
