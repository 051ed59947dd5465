-- modern/ttl.lua: the remaining lease, if the lock is ours.
-- Assembled after the fragments args.lua, modern_token.lua and modern_pttl.lua.
--
-- KEYS[1]  the lock key
-- ARGV[1]  this holder's token (1 to 1024 bytes)
--
-- Returns { 1, pttl}: ours; pttl is PTTL KEYS[1] in ms (-1: no expiry);
--         { 0, pttl}: another holder's; pttl is its PTTL;
--         {-1, -2}:   the key does not exist (expired).
-- Errors: a bad argument ('ERR lockbridge: bad argument …'); KEYS[1] of
-- another type than string (WRONGTYPE).
local token = modern_token(1)
return modern_pttl(KEYS[1], token)
