-- migrate/release.lua: release a lock taken in the dual-write or dual-read
-- phase, in one round trip: the modern key by token (with the release
-- notice), and — for dual-write — the legacy key by the owner window, as the
-- legacy lock releases it.
-- Prepended fragments: legacy_decode.lua, legacy_now.lua, legacy_owner.lua,
-- modern_release.lua.
--
-- KEYS[1]  the legacy key
-- KEYS[2]  the modern key
-- KEYS[3]  the modern key's release channel (same slot)
-- ARGV[1]  '1' when the lock wrote the legacy key (dual-write), else '0'
-- ARGV[2]  the legacy value codec id
-- ARGV[3]  our legacy expiry W, in the unit
-- ARGV[4]  our lease, in the unit
-- ARGV[5]  the unit: 'ms' or 's'
-- ARGV[6]  the exact legacy bytes we wrote
-- ARGV[7]  the modern token
-- ARGV[8]  'PUBLISH', 'SPUBLISH', or '' for no notice
--
-- Returns {modern, legacy}: modern_release's code (1 released, 0 taken,
-- -1 expired) and, for dual-write, legacy_owner's code (1 released, 0 taken,
-- -1 gone, -2 W passed; the key is also deleted when it still holds exactly
-- our bytes), 1 otherwise. The legacy key is looked at only when the modern
-- key held our token: the acquire wrote both in one script, so that proves
-- the legacy value near W is ours — and a release of a lock that was never
-- written (an acquire cancelled before it was sent), or was released
-- already, touches nothing of another holder's. Otherwise legacy is 0.

redis.replicate_commands()
local channel = false
if ARGV[8] ~= '' then
  channel = KEYS[3]
end
local m = modern_release(KEYS[2], ARGV[7], channel, ARGV[8])
local l = 1
if ARGV[1] == '1' and m ~= 1 then
  l = 0
elseif ARGV[1] == '1' then
  local stored = redis.call('GET', KEYS[1])
  l = legacy_owner(stored, ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5])
  if l == 1 or (l == -2 and stored == ARGV[6]) then
    redis.call('DEL', KEYS[1])
  end
end
return {m, l}
