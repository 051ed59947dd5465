-- legacy_owner.lua: the owner-window test of the legacy (Java SETNX +
-- GETSET) lock, which release and refresh use. Needs legacy_decode.lua and
-- legacy_now.lua before it. Defines, as a local of the including script:
--
--   legacy_owner(stored, codec, w, lease, unit) -> code
--     stored  a GET reply (false when there is no key)
--     codec   the value codec id (see legacy_decode.lua)
--     w       the expiry we wrote, W, in the unit
--     lease   our lease in the unit (W = then + lease [+ 1])
--     unit    'ms' or 's' (see legacy_now.lua)
--   code is
--      1  ours: stored decodes to T with |T - W| <= lease/2, and W has not
--         passed by the server's clock (now <= W)
--      0  taken: stored is foreign or decodes outside the window
--     -1  gone: there is no key
--     -2  expired: stored is within the window, but W has passed by the
--         server's clock, so a successor may already hold the lock
--
-- Why a window and not an exact compare: a losing Java contender's GETSET
-- overwrites W with its own X, |X - W| being the race plus clock skew; an
-- exact compare would then leave the key stuck until X. A legitimate
-- successor takes over only once W < its now and writes Y > W + its lease,
-- outside the window; the server-clock condition keeps a late release from
-- deleting it in any case. The caller must call redis.replicate_commands()
-- before writing (TIME is read here).

local function legacy_owner(stored, codec, w, lease, unit)
  if not stored then
    return -1
  end
  local t = legacy_decode(stored, codec)
  if t == nil or 2 * math.abs(t - w) > lease then
    return 0
  end
  if w < legacy_now(unit) then
    return -2
  end
  return 1
end
