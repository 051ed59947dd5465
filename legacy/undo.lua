-- legacy/undo.lua: undo an acquire whose reply was lost (its context ended
-- while the script was on the wire): delete the key only if it holds
-- exactly the bytes that acquire wrote. No other holder writes those bytes
-- (a successor's expiry is above ours), so this never frees another's lock.
-- No fragments.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the exact value the acquire would have written
--
-- Returns 1 when deleted, 0 otherwise.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
