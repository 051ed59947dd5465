-- modern/refresh.lua: owner-checked refresh.
-- Assembled after the fragments args.lua, modern_token.lua and modern_refresh.lua.
--
-- KEYS[1]  the lock key
-- ARGV[1]  this holder's token (1 to 1024 bytes)
-- ARGV[2]  the new lease in milliseconds (a decimal integer, 1 to 2^53 - 1)
--
-- Replies, the codes named as in Go (modernproto.go):
--   Ours   =  1  refreshed (PEXPIRE KEYS[1] ARGV[2])
--   Taken  =  0  the key holds another token: untouched
--   Absent = -1  the key does not exist (expired)
-- Errors, with nothing changed: a bad argument ('ERR lockbridge: bad
-- argument …'); KEYS[1] of another type than string (WRONGTYPE).
local token = modern_token(1)
arg_int(2, 1, 9007199254740991)
return modern_refresh(KEYS[1], token, ARGV[2])
