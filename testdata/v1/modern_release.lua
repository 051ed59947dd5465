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

-- modern/release.lua: owner-checked release with a release notification.
-- Assembled after the fragment modern_release.lua.
--
-- KEYS[1]  the lock key
-- KEYS[2]  its release channel "{key}:released" (absent when the key has none)
-- ARGV[1]  this holder's token
-- ARGV[2]  the publish command: "SPUBLISH" in Redis Cluster, "PUBLISH" otherwise
--
-- Returns 1: released (DEL, then ARGV[2] KEYS[2] "released");
--         0: the key holds another token (taken): untouched;
--        -1: the key does not exist (expired).
return modern_release(KEYS[1], ARGV[1], KEYS[2], ARGV[2])
