-- args.lua: strict checks of a script's arguments. Needs no other fragment.
-- Every script checks each ARGV it reads before it reads or writes a key,
-- so a caller that sends an argument in any other form (a JSON-quoted "1",
-- true, '1 ', a decimal with a sign or spaces) gets an error reply and
-- nothing is changed. Defines, as locals of the including script:
--
--   arg_count(n) -> checks that exactly n arguments were sent (a missing
--     or an extra one means the caller speaks another version of the
--     script's protocol).
--   arg_int(i, min, max) -> the number in ARGV[i]: ASCII digits with an
--     optional leading '-', no leading zeros (except '0' itself), at most
--     16 digits and at most 2^53 in magnitude (exact in a Lua double), and
--     min <= n <= max.
--   arg_flag(i) -> true for '1', false for '0'; nothing else is accepted.
--   arg_one_of(i, a[, b[, c[, d[, e]]]]) -> ARGV[i] when it equals one of
--     the given strings (one to five; no table is built unless it fails).
--   arg_nonempty(i) -> ARGV[i] when it is not empty.
--
-- An argument that fails raises an error reply starting with
-- 'ERR lockbridge: bad argument'.

local function arg_bad(i, want)
  local got = ARGV[i]
  if got == nil then
    got = '(missing)'
  elseif #got > 40 then
    got = string.format('%q', string.sub(got, 1, 40)) .. '...'
  else
    got = string.format('%q', got)
  end
  error({err = 'ERR lockbridge: bad argument ARGV[' .. i .. ']: want ' .. want .. ', got ' .. got})
end

local function arg_count(n)
  if #ARGV ~= n then
    error({err = 'ERR lockbridge: bad arguments: want ' .. n .. ' ARGV, got ' .. #ARGV})
  end
end

local function arg_int(i, min, max)
  local s = ARGV[i]
  -- One match (ARGV holds only strings): an optional '-', then digits
  -- without a leading zero; p is where the digits start (a position
  -- capture builds no substring).
  local p = s ~= nil and #s <= 17 and string.match(s, '^%-?()[1-9]%d*$')
  local n
  if p then
    local digits = #s - p + 1
    if digits > 16 then
      arg_bad(i, 'at most 16 digits')
    end
    n = tonumber(s)
    -- Up to 2^53 every integer is exact as a Lua number, so tonumber reads
    -- it exactly; the one above it that rounds down to 2^53 (2^53 + 1) is
    -- told by its digits (string equality: no locale collation involved).
    -- Below 16 digits the magnitude is under 2^53.
    if digits == 16 and (n > 9007199254740992 or n < -9007199254740992 or
        ((n == 9007199254740992 or n == -9007199254740992) and string.sub(s, p) ~= '9007199254740992')) then
      arg_bad(i, 'an integer of magnitude at most 2^53')
    end
  elseif s == '0' then
    n = 0
  else
    arg_bad(i, 'a decimal integer')
  end
  if n < min or n > max then
    arg_bad(i, 'an integer in [' .. string.format('%.0f', min) .. ', ' .. string.format('%.0f', max) .. ']')
  end
  return n
end

local function arg_flag(i)
  local s = ARGV[i]
  if s == '1' then
    return true
  elseif s == '0' then
    return false
  end
  arg_bad(i, "'0' or '1'")
end

local function arg_one_of(i, a, b, c, d, e)
  local s = ARGV[i]
  if s ~= nil and (s == a or s == b or s == c or s == d or s == e) then
    return s
  end
  arg_bad(i, 'one of ' .. table.concat({a, b, c, d, e}, ', '))
end

local function arg_nonempty(i)
  local s = ARGV[i]
  if type(s) ~= 'string' or s == '' then
    arg_bad(i, 'a non-empty string')
  end
  return s
end

-- server_time.lua: the server's clock, for scripts that stamp or age the
-- namespace's times by one clock (the server's). Needs no other fragment.
-- Scripts that write after calling it call redis.replicate_commands() first.
--
--   server_time() -> now_ms, now_us: the server's TIME in Unix milliseconds
--     and microseconds.

local function server_time()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end

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
