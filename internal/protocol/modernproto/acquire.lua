-- modern/acquire.lua: take the lock, in one round trip.
-- Assembled after the fragments args.lua, modern_token.lua,
-- modern_fence.lua and modern_acquire.lua.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence counter "{key}:fence" (only with fencing; absent otherwise)
-- ARGV[1]  this holder's token (1 to 1024 bytes)
-- ARGV[2]  the lease in milliseconds (a decimal integer, 1 to 2^53 - 1)
--
-- Replies {code, v}, the codes named as in Go (modernproto.go):
--   Ours  = 1  acquired (SET KEYS[1] ARGV[1] NX PX ARGV[2]); v is the fence,
--              max(counter + 1, the server's TIME in microseconds), stored
--              in KEYS[2], with fencing; 0 without
--   Taken = 0  held by another; v is the holder's remaining lease in ms
--              (-1: the key has no expiry)
-- Errors, with nothing written: a bad argument ('ERR lockbridge: bad
-- argument …'); KEYS[1] of another type than string (WRONGTYPE); an
-- unusable fence counter (FENCE …).
--
-- Without fencing (and without WAIT after it), lockbridge's Go lock sends
-- the plain command SET KEYS[1] ARGV[1] NX PX ARGV[2] instead, and this
-- script's twin ttl.lua only when that SET finds the key taken: the same
-- lock, one command on the server.
local token = modern_token(1)
arg_int(2, 1, 9007199254740991)
return modern_acquire(KEYS[1], token, ARGV[2], KEYS[2])
