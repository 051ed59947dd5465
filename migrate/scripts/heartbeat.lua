-- migrate/scripts/heartbeat.lua: a client's heartbeat into the namespace's registry
-- (protocol 2), and its reading of the phase, in one round trip. The entry's
-- liveness is kept by the server's clock: its expiry is the server's TIME
-- plus the hold the client asks for, so no client clock is ever compared
-- with another host's.
-- Prepended fragments: args.lua, server_time.lua.
--
-- KEYS[1]  the phase key
-- KEYS[2]  the namespace hash (protocol, phase, highest, gen, init)
-- KEYS[3]  the registry hash: client id -> entry (JSON, docs/protocol.md)
-- KEYS[4]  the registry expiry sorted set: client id -> server ms
-- KEYS[5]  the registry heartbeat sorted set: client id -> server ms
-- ARGV[1]  the client id (non-empty)
-- ARGV[2]  the entry, JSON with "v":2, "id" equal to ARGV[1], and "phase";
--          "seq", when present, an integer from 1 to 2^53-1 that grows with
--          every heartbeat of the client
-- ARGV[3]  the hold in ms: how long after this heartbeat the client may
--          still lock in the phase it reports (its phase lease plus the
--          longest lease it takes), 1 to 2^40
--
-- Returns {phase, init, gen, now}: the phase key's value ('' when absent),
-- the namespace's instance id and generation ('' when absent), and the
-- server's time in ms. The entry is written whatever the phase: a client
-- that cannot trust the phase still says where it was — unless the stored
-- entry has a "seq" at or above this one's: then this heartbeat was held up
-- in the network and a newer one landed first, and nothing is written (an
-- older entry, or a shorter hold, would hide what the client does now).

redis.replicate_commands()
local id = arg_nonempty(1)
local entry = arg_nonempty(2)
local hold = arg_int(3, 1, 1099511627776)
local ok, e = pcall(cjson.decode, entry)
if not ok or type(e) ~= 'table' or e['v'] ~= 2 or e['id'] ~= id or type(e['phase']) ~= 'string' then
  arg_bad(2, 'a registry entry of protocol 2 (JSON with "v":2, "id" equal to ARGV[1] and "phase")')
end
local seq = e['seq']
if seq ~= nil and (type(seq) ~= 'number' or seq < 1 or seq > 9007199254740991 or seq ~= math.floor(seq)) then
  arg_bad(2, 'a registry entry whose "seq" is an integer from 1 to 2^53-1')
end
local stale = false
if seq ~= nil then
  local old = redis.call('HGET', KEYS[3], id)
  if old then
    local ok2, o = pcall(cjson.decode, old)
    stale = ok2 and type(o) == 'table' and type(o['seq']) == 'number' and o['seq'] >= seq
  end
end
local now = server_time()
-- @entry: the entry and its expiry by the server's clock, unless stale
if not stale then
  redis.call('HSET', KEYS[3], id, entry)
  redis.call('ZADD', KEYS[4], now + hold, id)
  redis.call('ZADD', KEYS[5], now, id)
end
-- @read: the phase key, as it is ('' when missing)
local phase = redis.call('GET', KEYS[1])
local ns = redis.call('HMGET', KEYS[2], 'init', 'gen')
return {phase or '', ns[1] or '', ns[2] or '', now}
