-- migrate/scripts/status.lua: everything the controller judges but the protocol-3
-- registry, read at one moment together with the server's clock that ages
-- it and the server's eviction policy, which says whether that evidence
-- could have vanished. The registry is read apart, in short chunks
-- (registry_read.lua): read whole, ten thousand entries would hold the
-- server for tens of milliseconds. Changes nothing.
-- Prepended fragments: server_time.lua, server_replid.lua.
--
-- KEYS[1]  the phase key
-- KEYS[2]  the phase-since key
-- KEYS[3]  the namespace hash
-- KEYS[4]  the registry hash
-- KEYS[5]  the registry expiry set
-- KEYS[6]  the registry heartbeat set
-- KEYS[7]  the registry of protocol 1
-- KEYS[8]  the legacy-sighting hash
-- KEYS[9]  the namespace's mark
-- KEYS[10]  the init-pending stamp
--
-- Returns {now, phase, since, namespace, fleet1, sighting, mark, pending,
-- policy, expiring, entries, replid}: the server's time in ms; the phase and since
-- values (false when absent); then HGETALL of the namespace hash, the
-- protocol-1 registry, the sighting hash and the mark, as flat arrays; the
-- init-pending stamp (false when absent); {maxmemory_policy, ''} from INFO
-- memory, or {'', why} when it cannot be read; the names of the keys among
-- KEYS that carry a TTL (evidence that can expire, or be evicted under a
-- volatile-* policy); and the sizes of the registry hash and of its
-- expiry set {HLEN, ZCARD} (every script of the registry changes both
-- together: sizes that differ are an entry or an expiry written by hand);
-- and {master_replid, ''} from INFO replication, or {'', why} when it
-- cannot be read (the namespace hash's "replid" is the id phase_set.lua
-- last recorded: another means a failover or a restart since).

local now = server_time()
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
  redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[7]),
  redis.call('HGETALL', KEYS[8]), redis.call('HGETALL', KEYS[9]),
  redis.call('GET', KEYS[10]), policy, expiring, {redis.call('HLEN', KEYS[4]), redis.call('ZCARD', KEYS[5])},
  {server_replid()}}
