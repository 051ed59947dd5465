-- modern_refresh.lua: the modern lock's owner-checked refresh.
--
-- modern_refresh(key, token, ttl_ms) ->
--    1  key held token: PEXPIRE key ttl_ms done;
--    0  key holds another value (taken): untouched;
--   -1  key does not exist (expired): nothing done.
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

-- modern/refresh.lua: owner-checked refresh.
-- Assembled after the fragment modern_refresh.lua.
--
-- KEYS[1]  the lock key
-- ARGV[1]  this holder's token
-- ARGV[2]  the new lease in milliseconds (a positive integer)
--
-- Returns 1: refreshed (PEXPIRE KEYS[1] ARGV[2]);
--         0: the key holds another token (taken): untouched;
--        -1: the key does not exist (expired).
return modern_refresh(KEYS[1], ARGV[1], ARGV[2])
