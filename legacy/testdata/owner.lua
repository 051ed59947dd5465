-- testdata/owner.lua: test-only. Prepend args.lua, legacy_decode.lua,
-- legacy_args.lua, legacy_now.lua, legacy_expired.lua and legacy_owner.lua.
-- ARGV[1] is a stored value ('' for none), ARGV[2] to ARGV[7] the owner
-- arguments (legacy_owner_args: codec, unit, W, lease, the caller's now,
-- the margin in ms), ARGV[8] a takeover cutoff for legacy_state. Returns
-- {legacy_owner's code, legacy_state's state, legacy_now(unit) as '%.0f'}.
local stored = ARGV[1]
if stored == '' then
  stored = false
end
local codec, unit, w, lease, now, margin, wdigits = legacy_owner_args(2)
local code = legacy_owner(stored, codec, unit, w, lease, now, margin, wdigits)
local state = legacy_state(stored, codec, tonumber(ARGV[8]))
return {code, state, string.format('%.0f', legacy_now(unit))}
