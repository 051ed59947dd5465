-- migrate/acquire.lua: one attempt at a migrate lock in the dual-write or
-- dual-read phase, in one round trip. The lock is free only when the legacy
-- key is absent or expired (strict decoding, as the legacy lock) AND the
-- modern key is absent. Then it writes the modern key (SET NX PX), and in
-- dual-write the legacy key too; with fencing it INCRs the fence counter.
-- Prepended fragments: legacy_decode.lua, legacy_expired.lua,
-- modern_fence.lua, modern_acquire.lua.
--
-- KEYS[1]  the legacy key (as the legacy profile encodes it)
-- KEYS[2]  the modern key (same hash slot)
-- KEYS[3]  the fence counter key (same slot); only read when ARGV[8] is '1'
-- ARGV[1]  '1' to write the legacy key (dual-write), '0' not to (dual-read)
-- ARGV[2]  the legacy value to write: our expiry W in the codec's bytes
-- ARGV[3]  the legacy value codec id
-- ARGV[4]  our local clock's now, in the legacy profile's unit
-- ARGV[5]  the modern token
-- ARGV[6]  the lease in milliseconds (PX)
-- ARGV[7]  unused, reserved ('0')
-- ARGV[8]  '1' to INCR the fence counter, '0' not to
--
-- Returns
--   {1, fence}                acquired (fence 0 without fencing)
--   {0, pttl}                 the modern key is held; pttl its PTTL in ms
--   {-1, state, t, modern}    the legacy key is held: state 0 live (t its
--                             expiry in the unit) or -1 foreign (t 0);
--                             modern is 1 when the modern key exists too
--                             (a dual-write holder), 0 when it does not
--                             (a legacy-only holder: a legacy sighting)

local stored = redis.call('GET', KEYS[1])
local state, t = legacy_state(stored, ARGV[3], tonumber(ARGV[4]))
if state == 0 or state == -1 then
  return {-1, state, t or 0, redis.call('EXISTS', KEYS[2])}
end
local fence_key = false
if ARGV[8] == '1' then
  fence_key = KEYS[3]
end
local r = modern_acquire(KEYS[2], ARGV[5], ARGV[6], fence_key)
if r[1] == 1 and ARGV[1] == '1' then
  redis.call('SET', KEYS[1], ARGV[2])
end
return r
