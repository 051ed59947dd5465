-- legacy_expired.lua: the expiry test of the legacy (Java SETNX + GETSET)
-- lock, and the state of a stored value. Needs legacy_decode.lua before it.
-- Defines, as locals of the including script:
--
--   legacy_expired(t, now) -> true iff t < now, strictly, both in the
--     profile's unit (a lock whose expiry equals now is still live), as
--     every Java variant judges it. now is the caller's takeover cutoff,
--     passed in ARGV: its LOCAL clock (the Java side judges expiry by its
--     own clock too) minus its skew margin (legacy.Profile.Cutoff; 0 by
--     default, as Java), never the server's clock.
--
--   legacy_state(stored, codec, now) -> state, t
--     stored is a GET reply (false when there is no key). state is
--        1  free     no key
--        2  expired  stored decodes to t and legacy_expired(t, now)
--        0  live     stored decodes to t, not expired
--       -1  foreign  stored does not decode under codec: never expired
--     t is the decoded expiry (nil when free or foreign).

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
  return 0, t
end
