-- migrate/scripts/acquire.lua: one attempt at a migrate lock in the dual-write or
-- dual-read phase, in one round trip. The lock is free only when the legacy
-- key is absent or expired (strict decoding, as the legacy lock) AND the
-- modern key is absent. Then it writes the modern key (SET NX PX), and in
-- dual-write the legacy key too; with fencing it INCRs the fence counter.
-- Prepended fragments: args.lua, legacy_decode.lua, legacy_args.lua,
-- legacy_expired.lua, modern_fence.lua, modern_acquire.lua.
--
-- KEYS[1]  the legacy key (as the legacy profile encodes it)
-- KEYS[2]  the modern key (same hash slot)
-- KEYS[3]  with fencing, the fence counter key (same slot); without, the
--          modern key again (never touched: KEYS names only keys of the
--          slot)
-- ARGV[1]  '1' to write the legacy key (dual-write), '0' not to (dual-read)
-- ARGV[2]  the legacy value to write: our expiry W in the codec's bytes
--          (must decode under ARGV[3], in either phase)
-- ARGV[3]  the legacy value codec id
-- ARGV[4]  the takeover cutoff, in the legacy profile's unit: our local
--          clock's now minus the skew margin
-- ARGV[5]  the modern token (not empty)
-- ARGV[6]  the modern key's PX in milliseconds (at least 1)
-- ARGV[7]  reserved: '0'
-- ARGV[8]  '1' to INCR the fence counter, '0' not to
-- Every argument is checked (args.lua, legacy_args.lua) before any key is
-- read: a bad one — a flag sent as '"1"', 'true' or '1 ', a quoted number —
-- is an error reply, and nothing is written.
--
-- Replies, the codes named as in Go (migrateproto's calls.go):
--   AcquireOurs       =  1  {1, fence}: acquired (fence 0 without fencing)
--   AcquireModernHeld =  0  {0, pttl}: the modern key is held; pttl its
--                           PTTL in ms
--   AcquireLegacyHeld = -1  {-1, state, t, modern}: the legacy key is held;
--                           modern is 1 when the modern key exists too
--                           (a dual-write holder), 0 when it does not
--                           (a legacy-only holder: a legacy sighting)
--   LegacyLive        =  0  state: the legacy value is live, t its expiry
--                           in the unit
--   LegacyForeign     = -1  state: the legacy value does not decode, t 0

arg_count(8)
local dual_write = arg_flag(1)
local codec = legacy_arg_codec(3)
local value = legacy_arg_value(2, codec)
local cutoff = legacy_arg_time(4)
local token = arg_nonempty(5)
arg_int(6, 1, legacy_max)
arg_one_of(7, '0')
local fencing = arg_flag(8)

-- @free: the legacy key absent or expired, then the modern key absent
local stored = redis.call('GET', KEYS[1])
local state, t = legacy_state(stored, codec, cutoff)
if state == 0 or state == -1 then
  return {-1, state, t or 0, redis.call('EXISTS', KEYS[2])}
end
local fence_key = false
if fencing then
  fence_key = KEYS[3]
end
local r = modern_acquire(KEYS[2], token, ARGV[6], fence_key)
-- @write: the modern key written; in dual-write the legacy key too
if r[1] == 1 and dual_write then
  redis.call('SET', KEYS[1], value)
end
return r
