-- legacy_owner.lua: the owner-window test of the legacy (Java SETNX +
-- GETSET) lock, which release and refresh use. Needs legacy_decode.lua and
-- legacy_now.lua before it. Defines, as a local of the including script:
--
--   legacy_owner(stored, o) -> code
--     stored  a GET reply (false when there is no key)
--     o       the table legacy_owner_args returns (legacy_args.lua):
--             codec, unit, w (our expiry W), lease (W = then + lease [+ 1]),
--             now (the caller's own clock), margin (ms)
--   code is
--      1  ours: stored decodes to T with |T - W| <= lease/2, and the
--         caller's own clock has not reached W (now < W, the Java seed's
--         release condition), and the server's clock has not passed W by
--         more than the margin
--      0  taken: stored is foreign or decodes outside the window
--     -1  gone: there is no key
--     -2  expired: stored is within the window, but W has passed by the
--         caller's own clock (now >= W): a successor may hold the lock
--     -3  late: stored is within the window and the caller's clock had not
--         reached W, but the server's TIME is past W by more than the
--         margin: the script ran long after the caller decided (a pause, a
--         slow network), so a successor may hold the lock
--
-- The caller's clock decides, as on the Java side: the server's clock
-- never permits, it can only refuse (-3), and only beyond the margin, so a
-- server clock ahead of the caller's by less than the margin never refuses
-- a release the caller's clock allows. A server clock behind the caller's
-- weakens the second guard by as much: a script that runs within the
-- margin plus that lag after W is not refused.
--
-- Why a window and not an exact compare: a losing Java contender's GETSET
-- overwrites W with its own X, |X - W| being the race plus clock skew; an
-- exact compare would then leave the key stuck until X. A legitimate
-- successor takes over only once W is below its clock and writes
-- Y > W + its lease; with a lease under half ours Y can fall inside our
-- window, which the clock conditions keep a late release from deleting.
-- The caller must call redis.replicate_commands() before writing (TIME is
-- read here).

local function legacy_owner(stored, o)
  if not stored then
    return -1
  end
  local t = legacy_decode(stored, o.codec)
  -- @window: |T - W| <= lease/2
  if t == nil or 2 * math.abs(t - o.w) > o.lease then
    return 0
  end
  -- @caller-now: the caller's own clock decides
  if not (o.now < o.w) then
    return -2
  end
  local w_ms = o.w
  if o.unit == 's' then
    w_ms = o.w * 1000
  end
  -- @server-guard: the server's TIME only refuses, beyond the margin
  if legacy_now('ms') > w_ms + o.margin then
    return -3
  end
  return 1
end
