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

local function legacy_decimal(s)
  -- p is where the digits start (after the optional sign): a position
  -- capture, so no substring is built.
  local p = string.match(s, '^[+-]?()%d+$')
  if p == nil then
    return nil
  end
  local len = #s - p + 1
  if len > 19 then
    return nil
  end
  if len == 19 then
    -- Long.parseLong refuses values outside the int64 range. Compare digit
    -- by digit with the limit (string comparison would use strcoll).
    local limit = '9223372036854775807'
    if p == 2 and string.byte(s, 1) == 45 then -- '-'
      limit = '9223372036854775808'
    end
    for i = 1, 19 do
      local a, b = string.byte(s, p + i - 1), string.byte(limit, i)
      if a > b then
        return nil
      elseif a < b then
        break
      end
    end
  end
  -- The form is checked: tonumber reads it as strtod does, the sign
  -- included (a negative rounds as the negation of its magnitude).
  local n = tonumber(s)
  if n == 0 then
    n = 0 -- '-0': no negative zero
  end
  return n
end

local function legacy_decode(s, codec)
  if codec == 'decimal' or codec == 'json-number' then
    return legacy_decimal(s)
  elseif codec == 'json-string' then
    if #s < 3 or string.byte(s, 1) ~= 34 or string.byte(s, -1) ~= 34 then
      return nil
    end
    return legacy_decimal(string.sub(s, 2, -2))
  elseif codec == 'jdk-string' then
    -- The JDK String header: stream magic, version, TC_STRING. (Literals
    -- here and below are constants of the compiled script: a run builds
    -- no string for them.)
    if #s < 7 or string.sub(s, 1, 5) ~= '\172\237\000\005t' then
      return nil
    end
    if string.byte(s, 6) * 256 + string.byte(s, 7) ~= #s - 7 then
      return nil
    end
    return legacy_decimal(string.sub(s, 8))
  elseif codec == 'jdk-long' then
    -- The 74-byte prefix of a JDK-serialized java.lang.Long: the header,
    -- the class descriptors of java.lang.Long and java.lang.Number.
    if #s ~= 82 or string.sub(s, 1, 74) ~= '\172\237\000\005sr\000\014java.lang.Long;\139\228\144\204\143#\223\002\000\001J\000\005valuexr\000\016java.lang.Number\134\172\149\029\011\148\224\139\002\000\000xp' then
      return nil
    end
    -- The two 32-bit halves are exact; one sum rounds once, to the
    -- nearest double (beyond 2^53), with the high half signed.
    local b1, b2, b3, b4, b5, b6, b7, b8 = string.byte(s, 75, 82)
    local hi = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    local lo = ((b5 * 256 + b6) * 256 + b7) * 256 + b8
    if hi >= 2147483648 then
      hi = hi - 4294967296
    end
    return hi * 4294967296 + lo
  end
  error({err = 'ERR legacy: unknown value codec ' .. tostring(codec)})
end
