-- modern_fence.lua: the modern lock's fencing counter.
--
-- modern_fence(fence_key) -> integer: INCR fence_key, the new fence value
-- (1 for the first holder ever). The counter key never expires, so fences
-- stay strictly increasing for as long as it exists; fence_key must be in
-- the lock key's hash slot ("{key}:fence" for an untagged key).
local function modern_fence(fence_key)
  return redis.call('INCR', fence_key)
end
