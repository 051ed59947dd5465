-- sighting.lua: record that a live legacy lock was met with no modern key.
-- KEYS[1] the namespace's sighting hash
-- ARGV[1] now, Unix milliseconds; ARGV[2] the legacy key met
-- Keeps the latest time ("at") and key ("key"); counts sightings ("count").
-- Returns the count.
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '0')
if tonumber(ARGV[1]) > at then
  redis.call('HSET', KEYS[1], 'at', ARGV[1], 'key', ARGV[2])
end
return redis.call('HINCRBY', KEYS[1], 'count', 1)
