-- server_replid.lua: the server's replication id (INFO replication's
-- master_replid). It changes when a replica is promoted and when the
-- server restarts: writes made before either may be missing afterwards, so
-- a controller that sees another id than the one it recorded cannot take
-- the absence of evidence as its absence. Needs no other fragment. A
-- script that writes after calling it calls redis.replicate_commands()
-- first.
--
--   server_replid() -> id, why: the id, or '' and why it cannot be read.

local function server_replid()
  local info = redis.pcall('INFO', 'replication')
  if type(info) ~= 'string' then
    return '', 'INFO replication: ' .. tostring(type(info) == 'table' and info.err or info)
  end
  local id = string.match(info, 'master_replid:(%x+)')
  if id == nil then
    return '', 'INFO replication has no master_replid'
  end
  return id, ''
end
