-- legacy_now.lua: the server's clock in a legacy profile's unit. Needs no
-- other fragment. Defines, as a local of the including script:
--
--   legacy_now(unit) -> the server's TIME, truncated to unit: 'ms'
--     (milliseconds since the Unix epoch) or 's' (seconds), as
--     legacyproto.Profile.UnitID() names it on the Go side. An unknown unit raises an error reply.
--
-- TIME is non-deterministic: a script that calls legacy_now and then writes
-- must call redis.replicate_commands() first (a no-op on Redis >= 7, needed
-- on 5 and 6).

local function legacy_now(unit)
  local t = redis.call('TIME')
  local s = tonumber(t[1])
  if unit == 's' then
    return s
  elseif unit == 'ms' then
    return s * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  error({err = 'ERR legacy: unknown unit ' .. tostring(unit)})
end
