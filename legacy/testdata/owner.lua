-- testdata/owner.lua: test-only. Prepend legacy_decode.lua, legacy_now.lua,
-- legacy_expired.lua and legacy_owner.lua. ARGV[1] is a stored value ('' for
-- none), ARGV[2] the codec id, ARGV[3] W, ARGV[4] the lease, ARGV[5] the
-- unit, ARGV[6] a local now for legacy_state. Returns {legacy_owner's code,
-- legacy_state's state, legacy_now(unit) as '%.0f'}.
local stored = ARGV[1]
if stored == '' then
  stored = false
end
local code = legacy_owner(stored, ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5])
local state = legacy_state(stored, ARGV[2], tonumber(ARGV[6]))
return {code, state, string.format('%.0f', legacy_now(ARGV[5]))}
