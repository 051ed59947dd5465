-- legacy/scripts/release.lua: release a legacy lock in atomic mode, by the owner
-- window, in one round trip.
-- Prepended fragments: args.lua, legacy_decode.lua, legacy_args.lua,
-- legacy_now.lua, legacy_owner.lua.
--
-- KEYS[1]  the lock key, as the profile's key codec encodes it
-- ARGV[1]  the value codec id
-- ARGV[2]  the unit: 'ms' or 's'
-- ARGV[3]  our expiry W, in the unit (decimal)
-- ARGV[4]  our lease, in the unit (decimal, at least 1)
-- ARGV[5]  our own clock's now, in the unit (decimal), read just before
--          sending
-- ARGV[6]  the server-clock margin in milliseconds (decimal, at least 0)
-- Every argument is checked (args.lua, legacy_args.lua) before the key is
-- read: a bad one is an error reply, and nothing is deleted.
--
-- Replies legacy_owner's code, named as in Go (legacy/scripts.go):
--   ownerOurs    =  1  released: the key held our value (within the
--                      window), our clock had not reached W and the
--                      server's had not passed W + margin; the key is
--                      deleted
--   ownerTaken   =  0  the key holds another holder's (or a foreign)
--                      value: left alone
--   ownerGone    = -1  there is no key
--   ownerExpired = -2  W has passed by our own clock: the key is left alone
--   ownerLate    = -3  the server's clock is past W + margin (the script
--                      ran late): the key is left alone
-- Whatever the key holds after -2 or -3 is left to expire by its value,
-- even bytes equal to ours: a successor can write exactly our bytes (a
-- contender of the same lease in the same millisecond, or with a clock
-- behind ours), so deleting them could free a live lock.

arg_count(6)
local codec, unit, w, lease, now, margin, wdigits = legacy_owner_args(1)

redis.replicate_commands()
-- @owner: the owner-window test (legacy_owner.lua)
local code = legacy_owner(redis.call('GET', KEYS[1]), codec, unit, w, lease, now, margin, wdigits)
-- @delete: only when ours
if code == 1 then
  redis.call('DEL', KEYS[1])
end
return code
