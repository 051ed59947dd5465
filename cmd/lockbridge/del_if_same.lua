-- del_if_same.lua: the compare-and-delete of lockbridge unlock and fleet
-- cleanup. KEYS[1] the key; ARGV[1] the value shown to the operator.
-- Returns 1 deleted, 0 changed meanwhile (left alone).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
