-- legacy/release.lua: release a legacy lock in atomic mode, by the owner
-- window with the server's clock, in one round trip.
-- Prepended fragments: legacy_decode.lua, legacy_now.lua, legacy_owner.lua.
--
-- KEYS[1]  the lock key, as the profile's key codec encodes it
-- ARGV[1]  the value codec id
-- ARGV[2]  our expiry W, in the profile's unit (decimal)
-- ARGV[3]  our lease, in the profile's unit (decimal)
-- ARGV[4]  the unit: 'ms' or 's'
-- ARGV[5]  the exact bytes we wrote
--
-- Returns legacy_owner's code:
--    1  released: the key held our value (within the window) and W had not
--       passed by the server's clock; it is deleted
--    0  the key holds another holder's (or a foreign) value: left alone
--   -1  there is no key
--   -2  W has passed by the server's clock: the key is left alone, unless it
--       still holds exactly our bytes (nobody took over: a successor always
--       writes an expiry above W), in which case it is deleted for hygiene

redis.replicate_commands()
local stored = redis.call('GET', KEYS[1])
local code = legacy_owner(stored, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
if code == 1 or (code == -2 and stored == ARGV[5]) then
  redis.call('DEL', KEYS[1])
end
return code
