-- legacy/scripts/acquire.lua: one attempt at a legacy lock in atomic mode, in one
-- round trip: SETNX, else decode the stored value strictly and take it over
-- only when it has expired. A live or foreign value is never overwritten.
-- Prepended fragments: args.lua, legacy_decode.lua, legacy_args.lua,
-- legacy_expired.lua.
--
-- KEYS[1]  the lock key, as the profile's key codec encodes it
-- ARGV[1]  the value to write: our expiry W in the value codec's bytes
--          (must decode under ARGV[2])
-- ARGV[2]  the value codec id ('decimal', 'jdk-string', 'jdk-long',
--          'json-string', 'json-number')
-- ARGV[3]  the takeover cutoff, in the profile's unit: our local clock's
--          now minus the skew margin (decimal); a stored value below it
--          has expired
-- ARGV[4]  the safety TTL in milliseconds, '0' for none
-- Every argument is checked (args.lua) before any key is read: a bad one
-- is an error reply, and nothing is written.
--
-- Replies {state, stored}, the states (legacy_state's) named as in Go
-- (legacy/scripts.go):
--   stateFree    =  1  acquired: the key was absent (SETNX); {1}, no stored
--   stateExpired =  2  acquired: stored had expired (stored < cutoff) and
--                      was replaced
--   stateLive    =  0  not acquired: stored is live
--   stateForeign = -1  not acquired: stored does not decode (a foreign
--                      lock); {-1, first, size} for a foreign value above
--                      1024 bytes: its first 1024 bytes and its length (a
--                      foreign value can be large; a waiter polls it)
-- A key holding another type fails with the WRONGTYPE error of GET.

arg_count(4)
local codec = legacy_arg_codec(2)
local value = legacy_arg_value(1, codec)
local cutoff = legacy_arg_time(3)
local px = arg_int(4, 0, legacy_max)

-- @setnx: the key is absent: ours (the model's SETNX step, model/legacy.pml)
if redis.call('SETNX', KEYS[1], value) == 1 then
  if px > 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
  end
  return {1}
end
-- @takeover: a stored expiry below the cutoff is replaced, any other kept
local stored = redis.call('GET', KEYS[1])
local state = legacy_state(stored, codec, cutoff)
if state == 1 or state == 2 then
  if px > 0 then
    redis.call('SET', KEYS[1], value, 'PX', ARGV[4])
  else
    redis.call('SET', KEYS[1], value)
  end
end
if state == -1 and #stored > 1024 then
  return {state, string.sub(stored, 1, 1024), #stored}
end
return {state, stored}
