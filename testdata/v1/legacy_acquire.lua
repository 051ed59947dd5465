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

-- legacy_expired.lua: the expiry test of the legacy (Java SETNX + GETSET)
-- lock, and the state of a stored value. Needs legacy_decode.lua before it.
-- Defines, as locals of the including script:
--
--   legacy_expired(t, now) -> true iff t < now, strictly, both in the
--     profile's unit (a lock whose expiry equals now is still live), as
--     every Java variant judges it. now is the caller's LOCAL clock, passed
--     in ARGV: the Java side judges expiry by its own clock too.
--
--   legacy_state(stored, codec, now) -> state, t
--     stored is a GET reply (false when there is no key). state is
--        1  free     no key
--        2  expired  stored decodes to t and legacy_expired(t, now)
--        0  live     stored decodes to t, not expired
--       -1  foreign  stored does not decode under codec: never expired
--     t is the decoded expiry (nil when free or foreign).

local function legacy_expired(t, now)
  return t < now
end

local function legacy_state(stored, codec, now)
  if not stored then
    return 1, nil
  end
  local t = legacy_decode(stored, codec)
  if t == nil then
    return -1, nil
  end
  if legacy_expired(t, now) then
    return 2, t
  end
  return 0, t
end

-- legacy/acquire.lua: one attempt at a legacy lock in atomic mode, in one
-- round trip: SETNX, else decode the stored value strictly and take it over
-- only when it has expired. A live or foreign value is never overwritten.
-- Prepended fragments: legacy_decode.lua, legacy_expired.lua.
--
-- KEYS[1]  the lock key, as the profile's key codec encodes it
-- ARGV[1]  the value to write: our expiry W in the value codec's bytes
-- ARGV[2]  the value codec id ('decimal', 'jdk-string', 'jdk-long',
--          'json-string', 'json-number')
-- ARGV[3]  our local clock's now, in the profile's unit (decimal)
-- ARGV[4]  the safety TTL in milliseconds, '0' for none
--
-- Returns {state, stored}:
--   {1}          acquired: the key was absent (SETNX)
--   {2, stored}  acquired: stored had expired (stored < now) and was replaced
--   {0, stored}  not acquired: stored is live
--   {-1, stored} not acquired: stored does not decode (a foreign lock);
--   {-1, first, size}  the same for a foreign value above 1024 bytes: its
--                first 1024 bytes and its length (a foreign value can be
--                large; a waiter polls it)
-- A key holding another type fails with the WRONGTYPE error of GET.

local px = tonumber(ARGV[4])
if redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then
  if px > 0 then
    redis.call('PEXPIRE', KEYS[1], px)
  end
  return {1}
end
local stored = redis.call('GET', KEYS[1])
local state = legacy_state(stored, ARGV[2], tonumber(ARGV[3]))
if state == 1 or state == 2 then
  if px > 0 then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', px)
  else
    redis.call('SET', KEYS[1], ARGV[1])
  end
end
if state == -1 and #stored > 1024 then
  return {state, string.sub(stored, 1, 1024), #stored}
end
return {state, stored}
