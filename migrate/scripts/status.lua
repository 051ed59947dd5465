-- migrate/scripts/status.lua: everything the controller judges, read at one moment
-- together with the server's clock that ages it and the server's eviction
-- policy, which says whether that evidence could have vanished. Changes
-- nothing.
-- Prepended fragments: server_time.lua.
--
-- KEYS[1]  the phase key             KEYS[6]  the registry heartbeat set
-- KEYS[2]  the phase-since key       KEYS[7]  the registry of protocol 1
-- KEYS[3]  the namespace hash        KEYS[8]  the legacy-sighting hash
-- KEYS[4]  the registry hash         KEYS[9]  the namespace's mark
-- KEYS[5]  the registry expiry set   KEYS[10] the init-pending stamp
--
-- Returns {now, phase, since, namespace, entries, expiry, seen, fleet1,
-- sighting, mark, pending, policy, expiring}: the server's time in ms; the
-- phase and since values (false when absent); then HGETALL of the hashes
-- and ZRANGE … WITHSCORES of the sets, as flat arrays; HGETALL of the mark;
-- the init-pending stamp (false when absent); {maxmemory_policy, ''} from
-- INFO memory, or {'', why} when it cannot be read; and the names of the
-- keys among KEYS that carry a TTL (evidence that can expire, or be evicted
-- under a volatile-* policy).

local now = server_time()
local function zall(k)
  return redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
end
local policy = {'', ''}
local info = redis.pcall('INFO', 'memory')
if type(info) == 'string' then
  local p = string.match(info, 'maxmemory_policy:([%w%-]+)')
  if p then
    policy[1] = p
  else
    policy[2] = 'INFO memory has no maxmemory_policy'
  end
else
  policy[2] = 'INFO memory: ' .. tostring(type(info) == 'table' and info.err or info)
end
local expiring = {}
for i = 1, #KEYS do
  if redis.call('PTTL', KEYS[i]) > 0 then
    expiring[#expiring + 1] = KEYS[i]
  end
end
return {now, redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]),
  redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]),
  zall(KEYS[5]), zall(KEYS[6]), redis.call('HGETALL', KEYS[7]),
  redis.call('HGETALL', KEYS[8]), redis.call('HGETALL', KEYS[9]),
  redis.call('GET', KEYS[10]), policy, expiring}
