-- migrate/refresh.lua: extend a lock taken in the dual-write or dual-read
-- phase, in one round trip: PEXPIRE the modern key if it holds our token,
-- and — for dual-write — rewrite the legacy key with the new expiry under
-- the owner-window condition, as the legacy lock refreshes it.
-- Prepended fragments: legacy_decode.lua, legacy_now.lua, legacy_owner.lua,
-- modern_refresh.lua.
--
-- KEYS[1]  the legacy key
-- KEYS[2]  the modern key
-- ARGV[1]  '1' when the lock wrote the legacy key (dual-write), else '0'
-- ARGV[2]  the legacy value codec id
-- ARGV[3]  our current legacy expiry W, in the unit
-- ARGV[4]  the lease W was written with, in the unit
-- ARGV[5]  the unit: 'ms' or 's'
-- ARGV[6]  the new legacy value (the new expiry in the codec's bytes)
-- ARGV[7]  the modern token
-- ARGV[8]  the new lease in milliseconds
--
-- Returns {modern, legacy}: modern_refresh's code (1 extended, 0 taken,
-- -1 expired; 0 also when not attempted) and, for dual-write,
-- legacy_owner's code (1 ours), 1 otherwise. It is all or nothing: the
-- modern key is extended only when the legacy key is still ours, and the
-- legacy key rewritten only when the modern one was extended — a dual-write
-- holder must stay visible to legacy lockers for as long as it holds.

redis.replicate_commands()
local l = 1
if ARGV[1] == '1' then
  l = legacy_owner(redis.call('GET', KEYS[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5])
  if l ~= 1 then
    return {0, l}
  end
end
local m = modern_refresh(KEYS[2], ARGV[7], ARGV[8])
if m == 1 and ARGV[1] == '1' then
  redis.call('SET', KEYS[1], ARGV[6])
end
return {m, l}
