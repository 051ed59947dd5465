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
  if type(s) ~= 'string' or not (string.match(s, '^-?[1-9]%d*$') or s == '0') or #s > 17 then
    arg_bad(i, 'a decimal integer')
  end
  local digits = s
  if string.sub(s, 1, 1) == '-' then
    digits = string.sub(s, 2)
  end
  if #digits > 16 then
    arg_bad(i, 'at most 16 digits')
  end
  local n = tonumber(s)
  if n > 9007199254740992 or n < -9007199254740992 or string.format('%.0f', math.abs(n)) ~= digits then
    arg_bad(i, 'an integer of magnitude at most 2^53')
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
