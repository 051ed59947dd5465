-- phase_set.lua: compare-and-set of a namespace's phase, with a notice.
-- KEYS[1] the phase key, KEYS[2] the phase-change channel, KEYS[3] the
-- phase-since key (all three share the namespace's hash tag)
-- ARGV[1] the phase the caller saw ("legacy" when the key is absent)
-- ARGV[2] the new phase; ARGV[3] "PUBLISH", or "SPUBLISH" in a cluster
-- ARGV[4] now, Unix milliseconds (when the new phase starts)
-- Returns 1 when set; otherwise the current phase name (someone else moved).
local cur = redis.call('GET', KEYS[1]) or 'legacy'
if cur ~= ARGV[1] then
  return cur
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[3], ARGV[4])
redis.call(ARGV[3], KEYS[2], ARGV[2])
return 1
