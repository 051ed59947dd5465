-- probe.lua: lockbridge doctor's check of the commands lockbridge's scripts
-- send, run the way the scripts run them (inside EVAL), on scratch keys.
--
-- ARGV is a sequence of commands, each as its word count followed by its
-- words: 3, 'GET', key, 2, 'TIME', … (the keys are also in KEYS, all in one
-- hash slot). Each command runs with redis.pcall, so a refusal does not stop
-- the others. Returns one entry per command, in order: 'OK' when it ran
-- (whatever it returned), else the error text — for a command the user's ACL
-- denies, "… can't run this command …", which is all a real script would
-- learn at run time.
local out = {}
local i = 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  if n == nil or n < 1 or i + n > #ARGV then
    return redis.error_reply('ERR lockbridge: doctor probe: bad word count at ARGV[' .. i .. ']')
  end
  local cmd = {}
  for j = 1, n do
    cmd[j] = ARGV[i + j]
  end
  local r = redis.pcall(unpack(cmd))
  if type(r) == 'table' and r.err then
    out[#out + 1] = r.err
  else
    out[#out + 1] = 'OK'
  end
  i = i + n + 1
end
return out
