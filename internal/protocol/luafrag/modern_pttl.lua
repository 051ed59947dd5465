-- modern_pttl.lua: the modern lock's remaining lease, if ours.
--
-- modern_pttl(key, token) ->
--   { 1, pttl}  key holds token; pttl is its PTTL in ms (-1: no expiry);
--   { 0, pttl}  key holds another value; pttl is that holder's PTTL;
--   {-1, -2}    key does not exist.
-- The arguments must have been checked by the caller (see args.lua).
local function modern_pttl(key, token)
  local v = redis.call('GET', key)
  if v == token then
    return {1, redis.call('PTTL', key)}
  elseif v == false then
    return {-1, -2}
  end
  return {0, redis.call('PTTL', key)}
end
