-- migrate/scripts/phase_set.lua: compare-and-set of a namespace's phase, with a
-- notice; also its repair and its initialisation. Every time it writes is
-- the server's.
-- Prepended fragments: args.lua, server_time.lua.
--
-- KEYS[1]  the phase key
-- KEYS[2]  the phase-change channel
-- KEYS[3]  the phase-since key
-- KEYS[4]  the namespace hash (all four share the namespace's hash tag)
-- ARGV[1]  the phase key's value the caller saw: a phase name, or '' when
--          it was absent (only with ARGV[5] 'init' or 'repair'), or, for
--          'repair', the unreadable bytes it held
-- ARGV[2]  the new phase: legacy, dual-write, dual-read or modern
-- ARGV[3]  'PUBLISH', or 'SPUBLISH' in a cluster
-- ARGV[4]  the lowest generation to write (decimal, 0 to 2^53): a repair
--          passes one above every generation the registry reports
-- ARGV[5]  'step' (a controller's step), 'init' (a namespace that never had
--          a phase: only when the phase key and the namespace hash are both
--          absent) or 'repair' (keep the namespace's instance id, or take
--          ARGV[6])
-- ARGV[6]  for 'repair', the instance id to keep when the namespace hash is
--          gone (decimal; '0' for a new one); '0' otherwise
--
-- Sets the phase, phase-since (the server's ms: a repair restarts the quiet
-- period), and the namespace hash: protocol 2, the phase, the highest phase
-- reached, a generation above every earlier one (at least the server's
-- TIME in µs) and the instance id (set at init, or on the first step of a
-- namespace of protocol 1). Publishes the new phase.
-- Returns 1 when set; otherwise the phase key's value ('' when absent),
-- nothing changed.

redis.replicate_commands()
local rank = {legacy = 1, ['dual-write'] = 2, ['dual-read'] = 3, modern = 4}
local seen = ARGV[1]
local to = arg_one_of(2, 'legacy', 'dual-write', 'dual-read', 'modern')
local pub = arg_one_of(3, 'PUBLISH', 'SPUBLISH')
local min_gen = arg_int(4, 0, 9007199254740992)
local mode = arg_one_of(5, 'step', 'init', 'repair')
local keep_init = arg_int(6, 0, 9007199254740992)
if seen == nil or (mode == 'step' and rank[seen] == nil) then
  arg_bad(1, 'a phase name')
end
if mode == 'init' and seen ~= '' then
  arg_bad(1, "'' (init needs an absent phase key)")
end
local cur = redis.call('GET', KEYS[1])
if (cur or '') ~= seen then
  return cur or ''
end
if mode == 'init' and redis.call('EXISTS', KEYS[4]) == 1 then
  return cur or ''
end
local now_ms, now_us = server_time()
local ns = redis.call('HMGET', KEYS[4], 'gen', 'highest', 'init')
local gen = math.max(now_us, (tonumber(ns[1]) or 0) + 1, min_gen)
local highest = ns[2]
if rank[highest] == nil or rank[highest] < rank[to] then
  highest = to
end
local init = ns[3]
if init == false or init == nil then
  if keep_init > 0 then
    init = string.format('%.0f', keep_init)
  else
    init = string.format('%.0f', now_us)
  end
end
redis.call('SET', KEYS[1], to)
redis.call('SET', KEYS[3], string.format('%.0f', now_ms))
redis.call('HSET', KEYS[4], 'protocol', '2', 'phase', to, 'highest', highest,
  'gen', string.format('%.0f', gen), 'init', init)
redis.call(pub, KEYS[2], to)
return 1
