-- redisson/scripts/force_unlock.lua: free a Redisson-compatible lock
-- whoever holds it (Redisson's forceUnlock). Assembled after the fragment
-- args.lua.
--
-- KEYS[1]  the lock name
-- KEYS[2]  the lock's channel "redisson_lock__channel:{name}"
-- ARGV[1]  'PUBLISH', or 'SPUBLISH' in a cluster
--
-- Replies, the codes named as in Go (redisson/calls.go):
--   forceDeleted = 1  the key existed: it is deleted and "0" (Redisson's
--                     unlock message) is published on KEYS[2]
--   forceAbsent  = 0  there was no key: no message
arg_count(1)
local publish = arg_one_of(1, 'PUBLISH', 'SPUBLISH')

if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
redis.call(publish, KEYS[2], '0')
return 1
