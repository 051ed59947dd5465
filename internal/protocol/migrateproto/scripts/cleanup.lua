-- migrate/scripts/cleanup.lua: remove the controller's evidence once the
-- migration has ended (`lockbridge fleet cleanup`, Controller.Cleanup): the
-- registry entries dead by the server's clock and the legacy sighting, only
-- while the namespace is at modern, the phase unchanged since it was listed,
-- and the quiet period over by the server's clock.
-- Prepended fragments: args.lua, server_time.lua, server_replid.lua.
--
-- KEYS[1]  the phase key
-- KEYS[2]  the phase-since key
-- KEYS[3]  the registry hash
-- KEYS[4]  the registry expiry sorted set
-- KEYS[5]  the registry heartbeat sorted set
-- KEYS[6]  the legacy-sighting hash
-- KEYS[7]  the namespace hash
-- KEYS[8]  the namespace's mark
-- ARGV[1]  the phase-since value listed (the server's Unix ms, non-empty):
--          a phase set since then refuses
-- ARGV[2]  the quiet period in ms (0 to 2^40)
-- ARGV[3]  the liveness margin in ms (0 to 2^40): an entry goes once its
--          expiry plus the margin has passed, as the controller counts it
-- ARGV[4]  the sighting's "at" listed, or '' to keep the sighting hash
--          whatever it holds
-- ARGV[5]  the server's replication id (INFO replication's master_replid)
--          the reading was judged by, or '' when it could not be read: a
--          server with another id (a failover or a restart since the
--          reading) refuses, for its evidence was not the one judged
--
-- Replies {code, sighting, id...}, the codes named as in Go (migrateproto's
-- calls.go); nothing is removed for a code below 1:
--   CleanupDone            =  1  code: done
--   CleanupNotModern       = -1  code: the phase is not modern
--   CleanupPhaseMoved      = -2  code: the phase was set since it was listed
--   CleanupQuiet           = -3  code: the quiet period is not over
--   CleanupHistoryChanged  = -4  code: the server's replication id is not
--                                ARGV[5]
--   CleanupSightingDeleted =  1  sighting: the sighting hash was deleted
--   CleanupSightingKept    =  0  sighting: kept (none listed, its "at"
--                                changed, or younger than the quiet period)
-- then the ids of the entries removed. When done it
-- also writes the mark (phase and highest modern, the hash's instance and
-- generation, the server's ms), so that a namespace migrated before the
-- mark existed has one at its end state.

arg_count(5)
local since = arg_nonempty(1)
local quiet = arg_int(2, 0, 1099511627776)
local margin = arg_int(3, 0, 1099511627776)
local at = ARGV[4]
local judged = ARGV[5]

redis.replicate_commands()
if redis.call('GET', KEYS[1]) ~= 'modern' then
  return {-1, 0}
end
if redis.call('GET', KEYS[2]) ~= since then
  return {-2, 0}
end
local now = server_time()
if now - tonumber(since) < quiet then
  return {-3, 0}
end
if judged ~= '' and server_replid() ~= judged then
  return {-4, 0}
end
local out = {1, 0}
-- @mark: the end state, kept apart from the namespace's keys
local ns = redis.call('HMGET', KEYS[7], 'init', 'gen')
redis.call('HSET', KEYS[8], 'phase', 'modern', 'highest', 'modern', 'init', ns[1] or '0',
  'gen', ns[2] or '0', 'at', string.format('%.0f', now))
if at ~= '' and redis.call('HGET', KEYS[6], 'at') == at then
  local t = tonumber(at)
  if t and now - t >= quiet then
    redis.call('DEL', KEYS[6])
    local copy = tonumber(redis.call('HGET', KEYS[7], 'sighting-at') or '')
    if copy and copy <= t then
      redis.call('HDEL', KEYS[7], 'sighting-at')
    end
    out[2] = 1
  end
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. string.format('%.0f', now - margin))
for _, id in ipairs(dead) do
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZREM', KEYS[4], id)
  redis.call('ZREM', KEYS[5], id)
  out[#out + 1] = id
end
return out
