-- legacy/scripts/refresh.lua: extend a legacy lock in atomic mode: rewrite our value
-- with a new expiry, under the same owner-window condition as release.lua,
-- in one round trip.
-- Prepended fragments: args.lua, legacy_decode.lua, legacy_args.lua,
-- legacy_now.lua, legacy_owner.lua.
--
-- KEYS[1]  the lock key, as the profile's key codec encodes it
-- ARGV[1]  the value codec id
-- ARGV[2]  the unit: 'ms' or 's'
-- ARGV[3]  our current expiry W, in the unit (decimal)
-- ARGV[4]  the lease W was written with, in the unit (decimal, at least 1)
-- ARGV[5]  our own clock's now, in the unit (decimal), read just before
--          sending
-- ARGV[6]  the server-clock margin in milliseconds (decimal, at least 0)
-- ARGV[7]  the new value: the new expiry in the value codec's bytes (must
--          decode under ARGV[1])
-- ARGV[8]  the safety TTL in milliseconds, '0' for none
-- Every argument is checked before the key is read: a bad one is an error
-- reply, and nothing is written.
--
-- Replies legacy_owner's code, named as in Go (legacy/scripts.go):
--   ownerOurs    =  1  rewritten: the new value is stored, with the safety
--                      TTL when one is given
--   ownerTaken   =  0  taken: nothing written
--   ownerGone    = -1  gone: nothing written
--   ownerExpired = -2  W passed by our own clock: nothing written
--   ownerLate    = -3  the server's clock past W + margin: nothing written

arg_count(8)
local codec, unit, w, lease, now, margin, wdigits = legacy_owner_args(1)
local value = legacy_arg_value(7, codec)
local px = arg_int(8, 0, legacy_max)

redis.replicate_commands()
-- @owner: the owner-window test (legacy_owner.lua)
local code = legacy_owner(redis.call('GET', KEYS[1]), codec, unit, w, lease, now, margin, wdigits)
-- @rewrite: only when ours
if code == 1 then
  if px > 0 then
    redis.call('SET', KEYS[1], value, 'PX', ARGV[8])
  else
    redis.call('SET', KEYS[1], value)
  end
end
return code
