-- modern/ttl.lua: the remaining lease, if the lock is ours.
-- Assembled after the fragment modern_pttl.lua.
--
-- KEYS[1]  the lock key
-- ARGV[1]  this holder's token
--
-- Returns { 1, pttl}: ours; pttl is PTTL KEYS[1] in ms (-1: no expiry);
--         { 0, pttl}: another holder's; pttl is its PTTL;
--         {-1, -2}:   the key does not exist (expired).
return modern_pttl(KEYS[1], ARGV[1])
