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

-- The 74-byte prefix of a JDK-serialized java.lang.Long, built only when a
-- value is decoded as one (a script builds its locals on every run).
local function legacy_jdk_long()
  return string.char(
  0xac, 0xed, 0x00, 0x05, 0x73, 0x72, 0x00, 0x0e, 0x6a, 0x61, 0x76, 0x61,
  0x2e, 0x6c, 0x61, 0x6e, 0x67, 0x2e, 0x4c, 0x6f, 0x6e, 0x67, 0x3b, 0x8b,
  0xe4, 0x90, 0xcc, 0x8f, 0x23, 0xdf, 0x02, 0x00, 0x01, 0x4a, 0x00, 0x05,
  0x76, 0x61, 0x6c, 0x75, 0x65, 0x78, 0x72, 0x00, 0x10, 0x6a, 0x61, 0x76,
  0x61, 0x2e, 0x6c, 0x61, 0x6e, 0x67, 0x2e, 0x4e, 0x75, 0x6d, 0x62, 0x65,
  0x72, 0x86, 0xac, 0x95, 0x1d, 0x0b, 0x94, 0xe0, 0x8b, 0x02, 0x00, 0x00,
  0x78, 0x70)
end

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
    if #s ~= 82 or string.sub(s, 1, 74) ~= legacy_jdk_long() then
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
