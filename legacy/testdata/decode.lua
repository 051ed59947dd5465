-- testdata/decode.lua: test-only. Runs the fragment legacy_decode on
-- ARGV[1] under each codec id in ARGV[2], ARGV[3], … (prepend
-- legacy_decode.lua). Returns one entry per codec: the decoded number
-- formatted with '%.0f' (every digit of the double), or false when the
-- value does not decode (a foreign value).
local out = {}
for i = 2, #ARGV do
  local n = legacy_decode(ARGV[1], ARGV[i])
  if n == nil then
    out[i - 1] = false
  else
    out[i - 1] = string.format('%.0f', n)
  end
end
return out
