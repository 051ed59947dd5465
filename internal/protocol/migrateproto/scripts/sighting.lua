-- migrate/scripts/sighting.lua: record that a live legacy lock was met with no
-- modern key, stamped with the server's clock.
-- Prepended fragments: args.lua, server_time.lua.
--
-- KEYS[1]  the namespace's legacy-sighting hash
-- KEYS[2]  the namespace hash (optional: clients of earlier releases send
--          only KEYS[1])
-- ARGV[1]  the legacy key met (non-empty)
--
-- Keeps the latest time ("at", the server's Unix ms) and key ("key"), and
-- counts sightings ("count"). With KEYS[2] it also keeps the latest time in
-- the namespace hash's field "sighting-at": every heartbeat reads that hash,
-- so under an LRU policy eviction takes it last, and never the sighting
-- alone. Returns the count.

redis.replicate_commands()
local key = arg_nonempty(1)
local now = server_time()
-- @record: the sighting stamped with the server's TIME
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '0') or 0
if now >= at then
  redis.call('HSET', KEYS[1], 'at', string.format('%.0f', now), 'key', key)
end
if KEYS[2] then
  local copy = tonumber(redis.call('HGET', KEYS[2], 'sighting-at') or '0') or 0
  if now >= copy then
    redis.call('HSET', KEYS[2], 'sighting-at', string.format('%.0f', now))
  end
end
return redis.call('HINCRBY', KEYS[1], 'count', 1)
