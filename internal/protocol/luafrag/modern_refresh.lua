-- modern_refresh.lua: the modern lock's owner-checked refresh.
--
-- modern_refresh(key, token, ttl_ms) ->
--    1  key held token: PEXPIRE key ttl_ms done;
--    0  key holds another value (taken): untouched;
--   -1  key does not exist (expired): nothing done.
-- The arguments must have been checked by the caller (see args.lua).
local function modern_refresh(key, token, ttl)
  local v = redis.call('GET', key)
  if v == token then
    redis.call('PEXPIRE', key, ttl)
    return 1
  elseif v == false then
    return -1
  end
  return 0
end
