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
