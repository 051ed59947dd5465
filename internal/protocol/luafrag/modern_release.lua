-- modern_release.lua: the modern lock's owner-checked release.
--
-- modern_release(key, token, channel, publish) ->
--    1  key held token: deleted; when channel is given (not nil or false)
--       and publish is 'PUBLISH' or 'SPUBLISH', "released" was published on
--       channel with that command (errors of the publish, such as an ACL
--       without channel rights, are ignored: the release stands);
--    0  key holds another value (taken by another holder): untouched;
--   -1  key does not exist (expired): nothing done.
-- A key of another type than string raises WRONGTYPE.
-- The arguments must have been checked by the caller (see args.lua).
local function modern_release(key, token, channel, publish)
  local v = redis.call('GET', key)
  if v == token then
    redis.call('DEL', key)
    if channel and (publish == 'PUBLISH' or publish == 'SPUBLISH') then
      redis.pcall(publish, channel, 'released')
    end
    return 1
  elseif v == false then
    return -1
  end
  return 0
end
