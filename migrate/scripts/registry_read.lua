-- migrate/scripts/registry_read.lua: one chunk of the protocol-3 registry, for the
-- controller's reading (after status.lua). A chunk is a SCAN step, so no
-- call holds the server for long however large the fleet; SCAN returns,
-- over a full iteration, every element present from its start to its end.
-- Changes nothing.
-- Prepended fragments: args.lua.
--
-- KEYS[1]  the registry hash: client id -> entry
-- KEYS[2]  the registry expiry sorted set: client id -> server ms
-- KEYS[3]  the registry heartbeat sorted set: client id -> server ms
-- ARGV[1]  'entries': HSCAN the registry hash; 'orphans': ZSCAN the expiry
--          set for ids without an entry
-- ARGV[2]  the SCAN cursor ('0' to start)
-- ARGV[3]  the SCAN COUNT, 1 to 10000
--
-- Returns {cursor, ...}: the next cursor ('0' when the iteration is done),
-- then for 'entries' {ids and entries, flat; their expiry scores; their
-- heartbeat scores} (a score false when the id has none), and for 'orphans'
-- {ids and expiry scores, flat} of the expiries without an entry.

local mode = arg_one_of(1, 'entries', 'orphans')
local cursor = ARGV[2]
if cursor == nil or not string.match(cursor, '^%d+$') then
  arg_bad(2, 'a SCAN cursor')
end
local count = arg_int(3, 1, 10000)
if mode == 'entries' then
  local r = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', count)
  local flat = r[2]
  local exp, seen = {}, {}
  for i = 1, #flat, 2 do
    exp[#exp + 1] = redis.call('ZSCORE', KEYS[2], flat[i]) or false
    seen[#seen + 1] = redis.call('ZSCORE', KEYS[3], flat[i]) or false
  end
  return {r[1], flat, exp, seen}
end
local r = redis.call('ZSCAN', KEYS[2], cursor, 'COUNT', count)
local flat = r[2]
local out = {}
for i = 1, #flat, 2 do
  if redis.call('HEXISTS', KEYS[1], flat[i]) == 0 then
    out[#out + 1] = flat[i]
    out[#out + 1] = flat[i + 1]
  end
end
return {r[1], out}
