-- modern/ttl.lua: the remaining lease, if the lock is ours.
-- Assembled after the fragments args.lua, modern_token.lua and modern_pttl.lua.
--
-- KEYS[1]  the lock key
-- ARGV[1]  this holder's token (1 to 1024 bytes)
--
-- Replies {code, pttl}, the codes named as in Go (modernproto.go):
--   Ours   =  1  ours; pttl is PTTL KEYS[1] in ms (-1: no expiry)
--   Taken  =  0  another holder's; pttl is its PTTL
--   Absent = -1  the key does not exist (expired); pttl is -2
-- Errors: a bad argument ('ERR lockbridge: bad argument …'); KEYS[1] of
-- another type than string (WRONGTYPE).
local token = modern_token(1)
return modern_pttl(KEYS[1], token)
