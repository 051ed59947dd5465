-- modern_fence.lua: the modern lock's fencing counter. Needs no other
-- fragment.
--
-- modern_fence(fence_key) -> integer: the next fence, written to fence_key:
--   max(counter + 1, the server's TIME in microseconds since the epoch).
--   The counter alone would restart at 1 when the key is lost (a restart of
--   a server without persistence, a failover to a replica that had not yet
--   received it) or go back (a failover to a replica that lags behind); the
--   clock term keeps fences increasing across both, as long as the server
--   that issues the next fence has a clock ahead of the last fence issued.
--   The counter wins when it is ahead of the clock (several acquires in one
--   microsecond, a clock stepped back, counters written by older versions,
--   which only INCR): fences never go down while the key lives.
--
-- Fences stay below 2^53, exact as Lua numbers (and as doubles in any
-- JSON or JavaScript storage): the server's TIME reaches 2^53 µs in the
-- year 2255.
--
-- It checks the counter before writing anything, so an unusable counter
-- leaves every key as it was. It raises an error reply with the code FENCE
-- when fence_key holds another type than string, a value that is not a
-- decimal integer (ASCII digits with an optional '-'), or one at or above
-- 2^53 - 1 (no next fence below 2^53).
--
-- TIME is non-deterministic: the including script must call
-- redis.replicate_commands() before its first write (a no-op on Redis >= 7,
-- needed on 5 and 6); modern_fence writes the value itself with SET, so
-- replicas get the same number. The counter key never expires; fence_key
-- must be in the lock key's hash slot ("{key}:fence" for an untagged key).
local modern_fence_max = 9007199254740991 -- 2^53 - 1

local function modern_fence_refuse(fence_key, why)
  error({err = 'FENCE lockbridge: fence counter ' .. fence_key .. ' ' .. why .. ': nothing was written'})
end

local function modern_fence(fence_key)
  local c = redis.pcall('GET', fence_key)
  if type(c) == 'table' and c.err then
    modern_fence_refuse(fence_key, 'is unreadable (' .. c.err .. ')')
  end
  local t = redis.call('TIME')
  local next = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if c then
    local digits = string.match(c, '^-?(%d+)$')
    if digits == nil then
      modern_fence_refuse(fence_key, 'holds ' .. string.format('%q', string.sub(c, 1, 40)) .. ', not a decimal integer')
    end
    local n = tonumber(c)
    if #digits > 16 or n >= modern_fence_max then
      modern_fence_refuse(fence_key, 'holds ' .. string.sub(c, 1, 40) .. ': no fence left below 2^53')
    end
    if n + 1 > next then
      next = n + 1
    end
  end
  redis.call('SET', fence_key, string.format('%.0f', next))
  return next
end
