-- modern_acquire.lua: the modern lock's acquire. Needs modern_fence.lua
-- before it.
--
-- modern_acquire(key, token, ttl_ms, fence_key) ->
--   {1, fence}  acquired: key was absent and now holds token with a PX of
--               ttl_ms (a decimal string); fence is modern_fence(fence_key)
--               when fence_key is given (not nil or false), else 0;
--   {0, pttl}   not acquired: key holds a string (another holder's token);
--               pttl is its PTTL in milliseconds (-1 when it has no expiry).
-- Nothing is written unless everything succeeds: a key of another type
-- raises GET's WRONGTYPE, and an unusable fence counter raises
-- modern_fence's FENCE error, both before any write. The arguments must
-- have been checked by the caller (see args.lua).
local function modern_acquire(key, token, ttl, fence_key)
  if redis.call('GET', key) then
    return {0, redis.call('PTTL', key)}
  end
  local fence = 0
  if fence_key then
    redis.replicate_commands()
    fence = modern_fence(fence_key)
  end
  redis.call('SET', key, token, 'NX', 'PX', ttl)
  return {1, fence}
end
