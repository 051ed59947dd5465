-- legacy/refresh.lua: extend a legacy lock in atomic mode: rewrite our value
-- with a new expiry, under the same owner-window condition as release.lua,
-- in one round trip.
-- Prepended fragments: legacy_decode.lua, legacy_now.lua, legacy_owner.lua.
--
-- KEYS[1]  the lock key, as the profile's key codec encodes it
-- ARGV[1]  the value codec id
-- ARGV[2]  our current expiry W, in the profile's unit (decimal)
-- ARGV[3]  the lease W was written with, in the profile's unit (decimal)
-- ARGV[4]  the unit: 'ms' or 's'
-- ARGV[5]  the new value: the new expiry in the value codec's bytes
-- ARGV[6]  the safety TTL in milliseconds, '0' for none
--
-- Returns legacy_owner's code: 1 rewritten (the new value is stored, with
-- the safety TTL when one is given); 0 taken, -1 gone, -2 W passed by the
-- server's clock: nothing written.

redis.replicate_commands()
local stored = redis.call('GET', KEYS[1])
local code = legacy_owner(stored, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
if code == 1 then
  local px = tonumber(ARGV[6])
  if px > 0 then
    redis.call('SET', KEYS[1], ARGV[5], 'PX', px)
  else
    redis.call('SET', KEYS[1], ARGV[5])
  end
end
return code
