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
-- modern_fence's FENCE error, both before any write. Without a fence the
-- SET NX comes first (one command when the key is free); SET NX leaves a key
-- of another type alone, and the GET after it raises the WRONGTYPE. The
-- arguments must have been checked by the caller (see args.lua).
local function modern_acquire(key, token, ttl, fence_key)
  if not fence_key then
    if redis.call('SET', key, token, 'NX', 'PX', ttl) then
      return {1, 0}
    end
    redis.call('GET', key)
    return {0, redis.call('PTTL', key)}
  end
  if redis.call('GET', key) then
    return {0, redis.call('PTTL', key)}
  end
  redis.replicate_commands()
  local fence = modern_fence(fence_key)
  redis.call('SET', key, token, 'NX', 'PX', ttl)
  return {1, fence}
end
