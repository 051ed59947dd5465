-- migrate/scripts/status.lua: everything the controller judges, read at one moment
-- together with the server's clock that ages it. Changes nothing.
-- Prepended fragments: server_time.lua.
--
-- KEYS[1]  the phase key             KEYS[5]  the registry expiry set
-- KEYS[2]  the phase-since key       KEYS[6]  the registry heartbeat set
-- KEYS[3]  the namespace hash        KEYS[7]  the registry of protocol 1
-- KEYS[4]  the registry hash         KEYS[8]  the legacy-sighting hash
--
-- Returns {now, phase, since, namespace, entries, expiry, seen, fleet1,
-- sighting}: the server's time in ms; the phase and since values (false
-- when absent); then HGETALL of the hashes and ZRANGE … WITHSCORES of the
-- sets, as flat arrays.

local now = server_time()
local function zall(k)
  return redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
end
return {now, redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]),
  redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]),
  zall(KEYS[5]), zall(KEYS[6]), redis.call('HGETALL', KEYS[7]),
  redis.call('HGETALL', KEYS[8])}
