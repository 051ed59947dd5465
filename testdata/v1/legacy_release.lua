-- legacy_decode.lua: strict decoding of a legacy (Java SETNX + GETSET) lock
-- value, as the Java readers parse it: Long.parseLong on ASCII input.
-- Needs no other fragment. Defines, as locals of the including script:
--
--   legacy_decimal(s) -> number, or nil when s is not strict decimal:
--     an optional '+' or '-', then 1 to 19 ASCII digits, nothing else, and
--     within the int64 range (what Long.parseLong accepts in ASCII, capped
--     at 19 digits: a longer run of leading zeros is refused).
--
--   legacy_decode(s, codec) -> number, or nil when s does not decode under
--     codec (a foreign value: never expired, never taken over). codec is the
--     value codec's id, legacy.ValueCodec.String() in Go:
--       'decimal'      ASCII decimal, String.valueOf(long)
--       'json-number'  the same bytes (Jackson on a Long)
--       'json-string'  '"' decimal '"' (Jackson on a String)
--       'jdk-string'   ac ed 00 05 74 <u16 length> decimal (JDK String)
--       'jdk-long'     the 74-byte JDK java.lang.Long prefix, then the value
--                      as a big-endian int64 (82 bytes in all)
--     An unknown codec raises an error reply.
--
-- Lua numbers are doubles: decoded values are exact up to 2^53 (every
-- millisecond timestamp until the year 287396); larger ones are rounded to
-- the nearest double. The Go decoder, legacy.ValueCodec.Decode, accepts and
-- refuses exactly the same byte strings.

local legacy_jdk_string = string.char(0xac, 0xed, 0x00, 0x05, 0x74)

local legacy_jdk_long = string.char(
  0xac, 0xed, 0x00, 0x05, 0x73, 0x72, 0x00, 0x0e, 0x6a, 0x61, 0x76, 0x61,
  0x2e, 0x6c, 0x61, 0x6e, 0x67, 0x2e, 0x4c, 0x6f, 0x6e, 0x67, 0x3b, 0x8b,
  0xe4, 0x90, 0xcc, 0x8f, 0x23, 0xdf, 0x02, 0x00, 0x01, 0x4a, 0x00, 0x05,
  0x76, 0x61, 0x6c, 0x75, 0x65, 0x78, 0x72, 0x00, 0x10, 0x6a, 0x61, 0x76,
  0x61, 0x2e, 0x6c, 0x61, 0x6e, 0x67, 0x2e, 0x4e, 0x75, 0x6d, 0x62, 0x65,
  0x72, 0x86, 0xac, 0x95, 0x1d, 0x0b, 0x94, 0xe0, 0x8b, 0x02, 0x00, 0x00,
  0x78, 0x70)

local function legacy_decimal(s)
  local sign, digits = string.match(s, '^([+-]?)(%d+)$')
  if digits == nil or #digits > 19 then
    return nil
  end
  if #digits == 19 then
    -- Long.parseLong refuses values outside the int64 range. Compare digit
    -- by digit with the limit (string comparison would use strcoll).
    local limit = '9223372036854775807'
    if sign == '-' then
      limit = '9223372036854775808'
    end
    for i = 1, 19 do
      local a, b = string.byte(digits, i), string.byte(limit, i)
      if a > b then
        return nil
      elseif a < b then
        break
      end
    end
  end
  local n = tonumber(digits)
  if sign == '-' then
    n = 0 - n -- not -n: no negative zero
  end
  return n
end

local function legacy_decode(s, codec)
  if codec == 'decimal' or codec == 'json-number' then
    return legacy_decimal(s)
  elseif codec == 'json-string' then
    if #s < 3 or string.byte(s, 1) ~= 34 or string.byte(s, #s) ~= 34 then
      return nil
    end
    return legacy_decimal(string.sub(s, 2, -2))
  elseif codec == 'jdk-string' then
    if #s < 7 or string.sub(s, 1, 5) ~= legacy_jdk_string then
      return nil
    end
    if string.byte(s, 6) * 256 + string.byte(s, 7) ~= #s - 7 then
      return nil
    end
    return legacy_decimal(string.sub(s, 8))
  elseif codec == 'jdk-long' then
    if #s ~= 82 or string.sub(s, 1, 74) ~= legacy_jdk_long then
      return nil
    end
    local n = 0
    if string.byte(s, 75) < 128 then
      for i = 75, 82 do
        n = n * 256 + string.byte(s, i)
      end
      return n
    end
    -- Negative: two's complement, from the inverted bytes, so that small
    -- magnitudes stay exact.
    for i = 75, 82 do
      n = n * 256 + (255 - string.byte(s, i))
    end
    return -(n + 1)
  end
  error({err = 'ERR legacy: unknown value codec ' .. tostring(codec)})
end

-- legacy_now.lua: the server's clock in a legacy profile's unit. Needs no
-- other fragment. Defines, as a local of the including script:
--
--   legacy_now(unit) -> the server's TIME, truncated to unit: 'ms'
--     (milliseconds since the Unix epoch) or 's' (seconds), as
--     legacy.Profile.UnitID() names it. An unknown unit raises an error reply.
--
-- TIME is non-deterministic: a script that calls legacy_now and then writes
-- must call redis.replicate_commands() first (a no-op on Redis >= 7, needed
-- on 5 and 6).

local function legacy_now(unit)
  local t = redis.call('TIME')
  local s = tonumber(t[1])
  if unit == 's' then
    return s
  elseif unit == 'ms' then
    return s * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  error({err = 'ERR legacy: unknown unit ' .. tostring(unit)})
end

-- legacy_owner.lua: the owner-window test of the legacy (Java SETNX +
-- GETSET) lock, which release and refresh use. Needs legacy_decode.lua and
-- legacy_now.lua before it. Defines, as a local of the including script:
--
--   legacy_owner(stored, codec, w, lease, unit) -> code
--     stored  a GET reply (false when there is no key)
--     codec   the value codec id (see legacy_decode.lua)
--     w       the expiry we wrote, W, in the unit
--     lease   our lease in the unit (W = then + lease [+ 1])
--     unit    'ms' or 's' (see legacy_now.lua)
--   code is
--      1  ours: stored decodes to T with |T - W| <= lease/2, and W has not
--         passed by the server's clock (now <= W)
--      0  taken: stored is foreign or decodes outside the window
--     -1  gone: there is no key
--     -2  expired: stored is within the window, but W has passed by the
--         server's clock, so a successor may already hold the lock
--
-- Why a window and not an exact compare: a losing Java contender's GETSET
-- overwrites W with its own X, |X - W| being the race plus clock skew; an
-- exact compare would then leave the key stuck until X. A legitimate
-- successor takes over only once W < its now and writes Y > W + its lease,
-- outside the window; the server-clock condition keeps a late release from
-- deleting it in any case. The caller must call redis.replicate_commands()
-- before writing (TIME is read here).

local function legacy_owner(stored, codec, w, lease, unit)
  if not stored then
    return -1
  end
  local t = legacy_decode(stored, codec)
  if t == nil or 2 * math.abs(t - w) > lease then
    return 0
  end
  if w < legacy_now(unit) then
    return -2
  end
  return 1
end

-- legacy/release.lua: release a legacy lock in atomic mode, by the owner
-- window with the server's clock, in one round trip.
-- Prepended fragments: legacy_decode.lua, legacy_now.lua, legacy_owner.lua.
--
-- KEYS[1]  the lock key, as the profile's key codec encodes it
-- ARGV[1]  the value codec id
-- ARGV[2]  our expiry W, in the profile's unit (decimal)
-- ARGV[3]  our lease, in the profile's unit (decimal)
-- ARGV[4]  the unit: 'ms' or 's'
-- ARGV[5]  the exact bytes we wrote
--
-- Returns legacy_owner's code:
--    1  released: the key held our value (within the window) and W had not
--       passed by the server's clock; it is deleted
--    0  the key holds another holder's (or a foreign) value: left alone
--   -1  there is no key
--   -2  W has passed by the server's clock: the key is left alone, unless it
--       still holds exactly our bytes (nobody took over: a successor always
--       writes an expiry above W), in which case it is deleted for hygiene

redis.replicate_commands()
local stored = redis.call('GET', KEYS[1])
local code = legacy_owner(stored, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
if code == 1 or (code == -2 and stored == ARGV[5]) then
  redis.call('DEL', KEYS[1])
end
return code
