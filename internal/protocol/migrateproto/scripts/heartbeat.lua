-- migrate/scripts/heartbeat.lua: a client's heartbeat into the namespace's registry
-- (protocol 3), and its reading of the phase, in one round trip. The entry's
-- liveness is kept by the server's clock: its expiry is the server's TIME
-- plus the hold the client asks for, so no client clock is ever compared
-- with another host's. No JSON is decoded here: the entry is checked by its
-- prefix, and judged field by field by the controller.
-- Prepended fragments: args.lua, server_time.lua.
--
-- KEYS[1]  the phase key
-- KEYS[2]  the namespace hash (protocol, phase, highest, gen, init)
-- KEYS[3]  the registry hash: client id -> entry (JSON, docs/protocol.md)
-- KEYS[4]  the registry expiry sorted set: client id -> server ms
-- KEYS[5]  the registry heartbeat sorted set: client id -> server ms
-- ARGV[1]  the client id (non-empty)
-- ARGV[2]  the heartbeat's sequence number, 1 to 2^53-1, growing with every
--          heartbeat of the client
-- ARGV[3]  the hold in ms: how long after this heartbeat the client may
--          still lock in the phase its entry reports (its phase lease plus
--          the longest lease it takes), 1 to 2^40
-- ARGV[4]  the entry, JSON beginning {"v":3,"seq":<ARGV[2]>, — or '' for a
--          touch: the entry stored is the one the client last wrote, and
--          only its expiry and heartbeat time are renewed
-- ARGV[5]  for a touch, the seq of the entry it renews: that of the
--          client's last confirmed write, 1 to ARGV[2]-1; '' with an entry
--
-- Returns {phase, init, gen, now, written}: the phase key's value ('' when
-- absent), the namespace's instance id and generation ('' when absent), the
-- server's time in ms, and written:
-- Replies (written), the codes named as in Go (migrateproto's registry.go):
--   HeartbeatWritten =  1  the entry (or the touch) landed
--   HeartbeatStale   =  0  the stored entry has a "seq" at or above this
--                          one's (this heartbeat was held up in the network
--                          and a newer one landed first: nothing is
--                          written, since an older entry would hide what
--                          the client does now)
--   HeartbeatNoEntry = -1  a touch found no entry (forgotten or pruned
--                          meanwhile), or another than the one it names:
--                          nothing is written, and the client sends its
--                          entry again
--
-- A touch is judged by its seq as an entry is (0 when the stored entry's is
-- at or above it: it was sent before that entry), renews only the entry it
-- names (an older write of the client's, held up in the network, may have
-- landed after a forced forget: a touch must not keep it alive), and never
-- shortens the
-- stored expiry: a touch held up in the network may land after a newer
-- heartbeat that registered a longer hold (a longer lock), and must not cut
-- that hold short. The entry is written whatever the phase: a client that
-- cannot trust the phase still says where it was.

redis.replicate_commands()
arg_count(5)
local id = arg_nonempty(1)
local seq = arg_int(2, 1, 9007199254740991)
local hold = arg_int(3, 1, 1099511627776)
local entry = ARGV[4]
local renews
if entry == '' then
  if seq < 2 then
    arg_bad(2, 'a touch\'s seq, above the seq of the entry it renews (2 or more)')
  end
  renews = arg_int(5, 1, seq - 1)
else
  local head = '{"v":3,"seq":' .. ARGV[2] .. ','
  if string.sub(entry, 1, #head) ~= head or string.sub(entry, -1) ~= '}' then
    arg_bad(4, 'a registry entry of protocol 3 (JSON beginning {"v":3,"seq":ARGV[2],)')
  end
  if ARGV[5] ~= '' then
    arg_bad(5, '\'\' with an entry')
  end
end
local written = 1
local old = redis.call('HGET', KEYS[3], id)
local s
if old then
  s = string.match(old, '^{"v":3,"seq":(%d+),')
end
if s and tonumber(s) >= seq then
  written = 0
elseif entry == '' and (not s or tonumber(s) ~= renews) then
  written = -1
end
local now = server_time()
local expiry = now + hold
if entry == '' then
  local stored = tonumber(redis.call('ZSCORE', KEYS[4], id))
  if stored and stored > expiry then
    expiry = stored
  end
end
-- @entry: the entry (or, for a touch, the one stored) and its expiry by the
-- server's clock — a touch's never earlier than the stored one — unless
-- stale or gone
if written == 1 then
  if entry ~= '' then
    redis.call('HSET', KEYS[3], id, entry)
  end
  redis.call('ZADD', KEYS[4], expiry, id)
  redis.call('ZADD', KEYS[5], now, id)
end
-- @read: the phase key, as it is ('' when missing)
local phase = redis.call('GET', KEYS[1])
local ns = redis.call('HMGET', KEYS[2], 'init', 'gen')
return {phase or '', ns[1] or '', ns[2] or '', now, written}
