-- legacy_expired.lua: the expiry test of the legacy (Java SETNX + GETSET)
-- lock, and the state of a stored value. Needs legacy_decode.lua before it.
-- Defines, as locals of the including script:
--
--   legacy_expired(t, now) -> true iff t < now, strictly, both in the
--     profile's unit (a lock whose expiry equals now is still live), as
--     every Java variant judges it. now is the caller's takeover cutoff,
--     passed in ARGV: its LOCAL clock (the Java side judges expiry by its
--     own clock too) minus its skew margin (the Go side's legacyproto.Profile.Cutoff; 0 by
--     default, as Java), never the server's clock.
--
--   legacy_state(stored, codec, now) -> state, t
--     stored is a GET reply (false when there is no key). state is
--        1  free     no key
--        2  expired  stored decodes to t and legacy_expired(t, now)
--        0  live     stored decodes to t, not expired
--       -1  foreign  stored does not decode under codec: never expired
--     t is the decoded expiry (nil when free or foreign), for the reply:
--     a double at or above 2^63 (what the int64 values within 512 of
--     9223372036854775807 round to) would reach the client as
--     -9223372036854775808 (C's conversion of an out-of-range double into a
--     Redis integer), i.e. long expired; it is returned as 2^63 - 1024, the
--     largest double below 2^63, which is as live. The state is judged
--     before, on the decoded value.

local function legacy_expired(t, now)
  return t < now
end

local function legacy_state(stored, codec, now)
  if not stored then
    return 1, nil
  end
  local t = legacy_decode(stored, codec)
  if t == nil then
    return -1, nil
  end
  if legacy_expired(t, now) then
    return 2, t
  end
  if t >= 9223372036854775808 then
    t = 9223372036854774784
  end
  return 0, t
end
