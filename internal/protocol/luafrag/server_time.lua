-- server_time.lua: the server's clock, for scripts that stamp or age the
-- namespace's times by one clock (the server's). Needs no other fragment.
-- Scripts that write after calling it call redis.replicate_commands() first.
--
--   server_time() -> now_ms, now_us: the server's TIME in Unix milliseconds
--     and microseconds.

local function server_time()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end
