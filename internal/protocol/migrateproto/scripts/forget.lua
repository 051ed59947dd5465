-- migrate/scripts/forget.lua: remove a client from the registry (its own clean
-- leave, or an operator's `lockbridge fleet forget ID`).
-- Prepended fragments: args.lua, server_time.lua.
--
-- KEYS[1]  the registry hash (protocols 2 and 3)
-- KEYS[2]  the registry expiry sorted set
-- KEYS[3]  the registry heartbeat sorted set
-- KEYS[4]  the registry hash of protocol 1 (fb598b1)
-- ARGV[1]  the client id (non-empty)
-- ARGV[2]  '1' to remove it even while its entry is live by the server's
--          clock, '0' to refuse then
-- ARGV[3]  the liveness margin in ms (0 to 2^40): an entry counts as live
--          until its expiry plus the margin, as the controller counts it
--
-- Returns the number of entries removed (0: none had that id), or:
-- Replies, the codes named as in Go (migrateproto's registry.go):
--   ForgetLive     = -1  the entry is live and ARGV[2] is '0' (nothing
--                        removed)
--   ForgetNoExpiry = -2  the entry (protocols 2 and 3) has no expiry and
--                        ARGV[2] is '0': nothing shows it dead — the
--                        controller counts it live —, so nothing is removed

local id = arg_nonempty(1)
local force = arg_flag(2)
local margin = arg_int(3, 0, 1099511627776)
if not force then
  local exp = redis.call('ZSCORE', KEYS[2], id)
  if exp then
    local now = server_time()
    if tonumber(exp) + margin > now then
      return -1
    end
  elseif redis.call('HEXISTS', KEYS[1], id) == 1 then
    return -2
  end
end
local n = redis.call('HDEL', KEYS[1], id) + redis.call('HDEL', KEYS[4], id)
local z = redis.call('ZREM', KEYS[2], id) + redis.call('ZREM', KEYS[3], id)
if n == 0 and z > 0 then
  n = 1
end
return n
