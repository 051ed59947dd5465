-- modern_release.lua: the modern lock's owner-checked release.
--
-- modern_release(key, token, channel, publish) ->
--    1  key held token: deleted; when channel is given (not nil or false)
--       and publish is 'PUBLISH' or 'SPUBLISH', "released" is published on
--       channel with that command if anyone is subscribed to it (see
--       modern_notify); errors of the publish, such as an ACL without
--       channel rights, are ignored: the release stands;
--    0  key holds another value (taken by another holder): untouched;
--   -1  key does not exist (expired): nothing done.
-- A key of another type than string raises WRONGTYPE.
-- The arguments must have been checked by the caller (see args.lua).
-- modern_notify(channel, publish) publishes "released" on channel with
-- publish ('PUBLISH' or 'SPUBLISH') unless the server counts no subscriber
-- of it (PUBSUB NUMSUB, or PUBSUB SHARDNUMSUB for SPUBLISH). No wake-up is
-- lost: a waiter subscribes, waits for the server's confirmation, and only
-- then tries the lock again; scripts run one at a time, so a release either
-- ran before that subscription (and the waiter's next attempt finds the key
-- free) or after it (and counts the waiter). When the count cannot be taken
-- (an ACL without PUBSUB), it publishes. The count is the server's own:
-- waiters must subscribe on the server that runs the release (the primary),
-- with SUBSCRIBE for PUBLISH and SSUBSCRIBE for SPUBLISH; a pattern
-- subscription is not counted.
local function modern_notify(channel, publish)
  local count = 'NUMSUB'
  if publish == 'SPUBLISH' then
    count = 'SHARDNUMSUB'
  end
  local n = redis.pcall('PUBSUB', count, channel)
  if type(n) ~= 'table' or n[2] ~= 0 then
    redis.pcall(publish, channel, 'released')
  end
end

local function modern_release(key, token, channel, publish)
  local v = redis.call('GET', key)
  if v == token then
    redis.call('DEL', key)
    if channel and (publish == 'PUBLISH' or publish == 'SPUBLISH') then
      modern_notify(channel, publish)
    end
    return 1
  elseif v == false then
    return -1
  end
  return 0
end
