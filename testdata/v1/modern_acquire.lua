-- modern_fence.lua: the modern lock's fencing counter.
--
-- modern_fence(fence_key) -> integer: INCR fence_key, the new fence value
-- (1 for the first holder ever). The counter key never expires, so fences
-- stay strictly increasing for as long as it exists; fence_key must be in
-- the lock key's hash slot ("{key}:fence" for an untagged key).
local function modern_fence(fence_key)
  return redis.call('INCR', fence_key)
end

-- modern_acquire.lua: the modern lock's acquire. Needs modern_fence.lua
-- before it.
--
-- modern_acquire(key, token, ttl_ms, fence_key) ->
--   {1, fence}  acquired: SET key token NX PX ttl_ms succeeded; fence is
--               modern_fence(fence_key) when fence_key is given (not nil or
--               false), else 0;
--   {0, pttl}   not acquired: key exists; pttl is its PTTL in milliseconds
--               (-1 when it has no expiry).
local function modern_acquire(key, token, ttl, fence_key)
  if redis.call('SET', key, token, 'NX', 'PX', ttl) then
    if fence_key then
      return {1, modern_fence(fence_key)}
    end
    return {1, 0}
  end
  return {0, redis.call('PTTL', key)}
end

-- modern/acquire.lua: take the lock, in one round trip.
-- Assembled after the fragments modern_fence.lua and modern_acquire.lua.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence counter "{key}:fence" (only with fencing; absent otherwise)
-- ARGV[1]  this holder's token
-- ARGV[2]  the lease in milliseconds (a positive integer)
--
-- Returns {1, fence}: acquired (SET KEYS[1] ARGV[1] NX PX ARGV[2]); fence is
-- INCR KEYS[2] with fencing, 0 without. Returns {0, pttl}: held by another;
-- pttl is the holder's remaining lease in ms (-1: the key has no expiry).
return modern_acquire(KEYS[1], ARGV[1], ARGV[2], KEYS[2])
