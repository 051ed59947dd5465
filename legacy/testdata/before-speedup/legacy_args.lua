-- legacy_args.lua: strict checks of the legacy lock's script arguments.
-- Needs args.lua and legacy_decode.lua before it. Defines, as locals of the
-- including script:
--
--   legacy_arg_codec(i) -> ARGV[i] when it is a value codec id: 'decimal',
--     'jdk-string', 'jdk-long', 'json-string' or 'json-number'.
--   legacy_arg_time(i) -> the integer in ARGV[i]: a time or an expiry in
--     the profile's unit (any integer arg_int accepts).
--   legacy_arg_value(i, codec) -> ARGV[i] when it decodes under codec:
--     the bytes a Java reader of that codec parses, so a script never
--     writes a value the Java side cannot read.
--   legacy_owner_args(i) -> the arguments of the owner-window test,
--     ARGV[i] to ARGV[i+5], as a table:
--       codec   ARGV[i]    the value codec id
--       unit    ARGV[i+1]  'ms' or 's'
--       w       ARGV[i+2]  our expiry W, in the unit
--       lease   ARGV[i+3]  the lease W was written with, in the unit (>= 1)
--       now     ARGV[i+4]  the caller's own clock, in the unit
--       margin  ARGV[i+5]  the server-clock margin in milliseconds (>= 0)
--     (see legacy_owner.lua).

local legacy_max = 9007199254740992 -- 2^53

local function legacy_arg_codec(i)
  return arg_one_of(i, 'decimal', 'jdk-string', 'jdk-long', 'json-string', 'json-number')
end

local function legacy_arg_time(i)
  return arg_int(i, -legacy_max, legacy_max)
end

local function legacy_arg_value(i, codec)
  local s = ARGV[i]
  if type(s) ~= 'string' or legacy_decode(s, codec) == nil then
    arg_bad(i, 'a value that decodes as ' .. codec)
  end
  return s
end

local function legacy_owner_args(i)
  return {
    codec = legacy_arg_codec(i),
    unit = arg_one_of(i + 1, 'ms', 's'),
    w = legacy_arg_time(i + 2),
    lease = arg_int(i + 3, 1, legacy_max),
    now = legacy_arg_time(i + 4),
    margin = arg_int(i + 5, 0, legacy_max),
  }
end
