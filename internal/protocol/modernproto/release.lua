-- modern/release.lua: owner-checked release with a release notification.
-- Assembled after the fragments args.lua, modern_token.lua and modern_release.lua.
--
-- KEYS[1]  the lock key
-- KEYS[2]  its release channel "{key}:released" (absent when the key has none)
-- ARGV[1]  this holder's token (1 to 1024 bytes)
-- ARGV[2]  the publish command: "SPUBLISH" in Redis Cluster, "PUBLISH" otherwise
--
-- Replies, the codes named as in Go (modernproto.go):
--   Ours   =  1  released (DEL, then ARGV[2] KEYS[2] "released" unless
--                PUBSUB NUMSUB — SHARDNUMSUB for SPUBLISH — counts no
--                subscriber of KEYS[2])
--   Taken  =  0  the key holds another token: untouched
--   Absent = -1  the key does not exist (expired)
-- Errors, with nothing changed: a bad argument ('ERR lockbridge: bad
-- argument …'); KEYS[1] of another type than string (WRONGTYPE).
local token = modern_token(1)
local publish = arg_one_of(2, 'PUBLISH', 'SPUBLISH')
return modern_release(KEYS[1], token, KEYS[2], publish)
