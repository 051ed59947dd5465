-- migrate/scripts/refresh.lua: extend a lock taken in the dual-write or dual-read
-- phase, in one round trip: PEXPIRE the modern key if it holds our token,
-- and — for dual-write — rewrite the legacy key with the new expiry under
-- the owner-window condition, as the legacy lock refreshes it.
-- Prepended fragments: args.lua, legacy_decode.lua, legacy_args.lua,
-- legacy_now.lua, legacy_owner.lua, modern_refresh.lua.
--
-- KEYS[1]  the legacy key
-- KEYS[2]  the modern key
-- ARGV[1]  '1' when the lock wrote the legacy key (dual-write), else '0'
-- ARGV[2]  the modern token (not empty)
-- ARGV[3]  the modern key's new PX in milliseconds (at least 1)
-- ARGV[4]  the new legacy value (the new expiry in the codec's bytes; must
--          decode under ARGV[5], in either phase)
-- ARGV[5]  the legacy value codec id
-- ARGV[6]  the legacy unit: 'ms' or 's'
-- ARGV[7]  our current legacy expiry W, in the unit
-- ARGV[8]  the lease W was written with, in the unit (at least 1)
-- ARGV[9]  our own clock's now, in the unit, read just before sending
-- ARGV[10]  the server-clock margin in milliseconds (at least 0)
-- Every argument is checked before any key is read: a bad one is an error
-- reply, and nothing is written.
--
-- Replies {modern, legacy}, the codes named as in Go (migrateproto's
-- calls.go): modern is modern_refresh's code, legacy for dual-write legacy_owner's,
-- OwnerOurs otherwise.
--   ModernOurs   =  1  the modern key held our token: extended
--   ModernTaken  =  0  another token (also: not attempted)
--   ModernAbsent = -1  no modern key (expired)
--   OwnerOurs    =  1  the legacy key was ours: rewritten
--   OwnerTaken   =  0  another value
--   OwnerGone    = -1  no legacy key
--   OwnerExpired = -2  our expiry W has passed by our own clock
--   OwnerLate    = -3  the server's clock was past W + the margin
--
-- It is all or nothing: the
-- modern key is extended only when the legacy key is still ours, and the
-- legacy key rewritten only when the modern one was extended — a dual-write
-- holder must stay visible to legacy lockers for as long as it holds.

arg_count(10)
local dual_write = arg_flag(1)
local token = arg_nonempty(2)
arg_int(3, 1, legacy_max)
local codec, unit, w, lease, now, margin, wdigits = legacy_owner_args(5)
local value = legacy_arg_value(4, codec)

redis.replicate_commands()
local l = 1
if dual_write then
  l = legacy_owner(redis.call('GET', KEYS[1]), codec, unit, w, lease, now, margin, wdigits)
  if l ~= 1 then
    return {0, l}
  end
end
local m = modern_refresh(KEYS[2], token, ARGV[3])
if m == 1 and dual_write then
  redis.call('SET', KEYS[1], value)
end
return {m, l}
