-- migrate/scripts/release.lua: release a lock taken in the dual-write or dual-read
-- phase, in one round trip: the modern key by token (with the release
-- notice), and — for dual-write — the legacy key by the owner window, as the
-- legacy lock releases it.
-- Prepended fragments: args.lua, legacy_decode.lua, legacy_args.lua,
-- legacy_now.lua, legacy_owner.lua, modern_release.lua.
--
-- KEYS[1]  the legacy key
-- KEYS[2]  the modern key
-- KEYS[3]  the modern key's release channel (same slot); the modern key
--          again when there is none (then ARGV[3] is '')
-- ARGV[1]  '1' when the lock wrote the legacy key (dual-write), else '0'
-- ARGV[2]  the modern token (not empty)
-- ARGV[3]  'PUBLISH', 'SPUBLISH', or '' for no notice
-- ARGV[4]  the legacy value codec id
-- ARGV[5]  the legacy unit: 'ms' or 's'
-- ARGV[6]  our legacy expiry W, in the unit
-- ARGV[7]  the lease W was written with, in the unit (at least 1)
-- ARGV[8]  our own clock's now, in the unit, read just before sending
-- ARGV[9]  the server-clock margin in milliseconds (at least 0)
-- ARGV[4] to ARGV[9] are checked in dual-read too. Every argument is
-- checked before any key is read: a bad one is an error reply, and nothing
-- is deleted.
--
-- Replies {modern, legacy}, the codes named as in Go (migrateproto's
-- calls.go): modern is modern_release's code, legacy for dual-write legacy_owner's,
-- OwnerOurs otherwise.
--   ModernOurs   =  1  the modern key held our token: released
--   ModernTaken  =  0  another token
--   ModernAbsent = -1  no modern key (expired)
--   OwnerOurs    =  1  the legacy key was ours: deleted
--   OwnerTaken   =  0  another value
--   OwnerGone    = -1  no legacy key
--   OwnerExpired = -2  our expiry W has passed by our own clock
--   OwnerLate    = -3  the server's clock was past W + the margin
--
-- The legacy key is looked at only when the
-- modern key held our token: the acquire wrote both in one script, so that
-- proves the legacy value near W is ours — and a release of a lock that was
-- never written (an acquire cancelled before it was sent), or was released
-- already, touches nothing of another holder's. Otherwise legacy is 0. The
-- legacy key is deleted only on code 1: bytes equal to ours after -2 or -3
-- may be a successor's (see legacy/release.lua).

arg_count(9)
local dual_write = arg_flag(1)
local token = arg_nonempty(2)
local publish = arg_one_of(3, 'PUBLISH', 'SPUBLISH', '')
local codec, unit, w, lease, now, margin, wdigits = legacy_owner_args(4)

redis.replicate_commands()
local channel = false
if publish ~= '' then
  channel = KEYS[3]
end
local m = modern_release(KEYS[2], token, channel, publish)
local l = 1
if dual_write and m ~= 1 then
  l = 0
elseif dual_write then
  l = legacy_owner(redis.call('GET', KEYS[1]), codec, unit, w, lease, now, margin, wdigits)
  if l == 1 then
    redis.call('DEL', KEYS[1])
  end
end
return {m, l}
