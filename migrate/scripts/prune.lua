-- migrate/scripts/prune.lua: drop registry entries (protocol 2 and 3) dead for longer
-- than a grace period, by the server's clock.
-- Prepended fragments: args.lua, server_time.lua.
--
-- KEYS[1]  the registry hash
-- KEYS[2]  the registry expiry sorted set
-- KEYS[3]  the registry heartbeat sorted set
-- ARGV[1]  the grace in ms (0 to 2^40): an entry goes once its expiry is
--          more than this in the past
-- ARGV[2]  at most this many entries go in one call (1 to 10000), so no
--          call holds the server for long: a caller that got as many back
--          calls again
--
-- Returns the number of entries dropped.

local grace = arg_int(1, 0, 1099511627776)
local limit = arg_int(2, 1, 10000)
local now = server_time()
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format('%.0f', now - grace), 'LIMIT', 0, limit)
for _, id in ipairs(dead) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
return #dead
