-- migrate/scripts/phase_set.lua: compare-and-set of a namespace's phase, with a
-- notice; also its repair and its initialisation. Every time it writes or
-- judges is the server's.
-- Prepended fragments: args.lua, server_time.lua, server_replid.lua.
--
-- KEYS[1]  the phase key
-- KEYS[2]  the phase-change channel
-- KEYS[3]  the phase-since key
-- KEYS[4]  the namespace hash
-- KEYS[5]  the namespace's mark (kept apart from the namespace's keys: a
--          flush of those leaves it, and it says the namespace ran)
-- KEYS[6]  the init-pending stamp
-- KEYS[7]  the registry hash
-- KEYS[8]  the legacy-sighting hash
-- KEYS[9]  the registry of protocol 1 (all nine share the namespace's hash tag)
-- ARGV[1]  the phase key's value the caller saw: a phase name, or '' when
--          it was absent (only with ARGV[5] 'init' or 'repair'), or, for
--          'repair', the unreadable bytes it held
-- ARGV[2]  the new phase: legacy, dual-write, dual-read or modern
-- ARGV[3]  'PUBLISH', or 'SPUBLISH' in a cluster
-- ARGV[4]  the lowest generation to write (decimal, 0 to 2^53): a repair
--          passes one above every generation the registry reports
-- ARGV[5]  'step' (a controller's step), 'init' (a namespace that never had
--          a phase), 'repair' (keep the namespace's instance id, or take
--          ARGV[6]) or 'history' (record a change of the server's
--          replication id: nothing else changes)
-- ARGV[6]  for 'repair', the instance id to keep when the namespace hash is
--          gone (decimal; '0' for a new one); '0' otherwise
-- ARGV[7]  for 'init', the silence in ms (0 to 2^40): how long the
--          namespace must have shown no trace by the server's clock,
--          counted from the init-pending stamp the first init call writes;
--          '0' otherwise (and for a forced init)
-- ARGV[8]  for 'step' and 'history', the server's replication id the
--          caller judged by (status.lua); '' otherwise, and for a forced
--          step (which checks no id)
-- ARGV[9]  for 'step' and 'repair', the namespace hash's "gen" the set was
--          judged by ('' when the reading found none); absent: not checked
-- ARGV[10]  for 'step' and 'repair', the server's ms after which the set
--           sets nothing: its reading's time by the server's clock plus
--           the controller's step window; absent or '': not checked
-- ARGV[11]  for 'step' and 'repair', the mark's "gen" the set was judged
--           by ('' when the reading found none); absent: not checked
--
-- A step or a repair is set only on the state it was judged on: the phase
-- key holding ARGV[1] is not enough, for a rollback puts the same name
-- back, and a second flush of the namespace's keys the same absence (a set
-- whose caller gave up, still on its way, would land after either), and
-- evidence that appeared after the reading (a legacy sighting, a registry
-- entry) was never judged. So a set whose namespace hash or mark has
-- another generation than ARGV[9] or ARGV[11] (a step, repair or init set
-- it since: each writes both, and a flush leaves the mark), or that runs
-- after ARGV[10] by the server's clock, sets nothing and replies
-- PhaseSetStale.
--
-- A trace is a phase, the namespace hash, the mark, a legacy sighting, an
-- entry of protocol 1, or a registry entry other than a locker's that
-- waits for the first phase (ns_init 0, phase legacy, no other next,
-- nothing held). An init sets nothing while there is one (it returns 0), and,
-- with a silence, while the stamp is younger than the silence: it writes
-- the stamp when there is none (or one in the server's future) and returns
-- minus the ms left. Once the silence has passed it deletes the stamp and
-- sets the phase.
--
-- Sets the phase, phase-since (the server's ms: a repair restarts the quiet
-- period), the namespace hash and the mark: protocol 3 (hash only), the
-- phase, the highest phase reached, a generation above every earlier one
-- the hash or the mark holds (at least the server's TIME in µs), the
-- instance id (set at init, or on the first step of a namespace of
-- protocol 1; a repair keeps the hash's, then the mark's, then ARGV[6])
-- and, in the mark, when (the server's ms); a repair also stamps
-- "restored" in the hash (the server's ms): registry entries and sightings
-- lost with the namespace are missing until they had time to come back.
-- Every set also records the server's replication id ("replid" in the
-- hash): an id other than the recorded one means a failover or a restart
-- since, which may have lost registry entries and sightings. A step judged
-- by another id than the server's sets nothing: it records the id and
-- stamps "restored" as a repair does (the controller then waits as after a
-- restore), and replies PhaseSetHistory; so does 'history', which only
-- records (replying PhaseSetDone, writing nothing, when the recorded id is
-- already ARGV[8] or the namespace hash is gone: a loss judged apart). A
-- step or repair that sets the phase where another id than the server's is
-- recorded (a forced step, which checks none) stamps "restored" too.
-- Publishes the new phase.
-- Replies, the codes named as in Go (migrateproto's calls.go):
--   PhaseSetDone   = 1  the phase is set
--   PhaseSetTraced = 0  an init met a trace of the namespace: nothing set
--   PhaseSetHistoryChanged = 2  the server's replication id is not the one
--                       the step was judged by, or not the one recorded:
--                       "restored" stamped, the id recorded, the phase
--                       unchanged
--   PhaseSetStale  = 3  a step or repair judged on another generation of
--                       the namespace or the mark, or run after ARGV[10]:
--                       nothing changed
-- and, for an init, a negative number: minus the ms of silence left;
-- otherwise the phase key's value ('' when absent), nothing changed.

redis.replicate_commands()
local rank = {legacy = 1, ['dual-write'] = 2, ['dual-read'] = 3, modern = 4}
local seen = ARGV[1]
local to = arg_one_of(2, 'legacy', 'dual-write', 'dual-read', 'modern')
local pub = arg_one_of(3, 'PUBLISH', 'SPUBLISH')
local min_gen = arg_int(4, 0, 9007199254740992)
local mode = arg_one_of(5, 'step', 'init', 'repair', 'history')
local keep_init = arg_int(6, 0, 9007199254740992)
local silence = arg_int(7, 0, 1099511627776)
local judged = ARGV[8] or ''
local judged_set = mode == 'step' or mode == 'repair'
local judged_gen, judged_mark = ARGV[9], ARGV[11]
local step_until
if judged_set and ARGV[10] ~= nil and ARGV[10] ~= '' then
  step_until = arg_int(10, 0, 9007199254740992)
end
if seen == nil or ((mode == 'step' or mode == 'history') and rank[seen] == nil) then
  arg_bad(1, 'a phase name')
end
if mode == 'init' and seen ~= '' then
  arg_bad(1, "'' (init needs an absent phase key)")
end
local cur = redis.call('GET', KEYS[1])
if (cur or '') ~= seen then
  return cur or ''
end
local now_ms, now_us = server_time()
if judged_set then
  -- @judged: the state the set was judged on, and soon enough after it
  if judged_gen ~= nil and (redis.call('HGET', KEYS[4], 'gen') or '') ~= judged_gen then
    return 3
  end
  if judged_mark ~= nil and (redis.call('HGET', KEYS[5], 'gen') or '') ~= judged_mark then
    return 3
  end
  if step_until ~= nil and now_ms > step_until then
    return 3
  end
end
local replid = server_replid()
if mode == 'history' or (mode == 'step' and judged ~= '' and replid ~= judged) then
  -- @history: writes made before a failover or a restart may be lost; the
  -- evidence refills from here, as after a repair
  if mode == 'history' and (redis.call('HEXISTS', KEYS[4], 'protocol') == 0 or
      (replid ~= '' and replid == judged and redis.call('HGET', KEYS[4], 'replid') == replid)) then
    return 1 -- no namespace hash (a loss of its own, judged apart), or recorded already
  end
  redis.call('HSET', KEYS[4], 'replid', replid, 'restored', string.format('%.0f', now_ms))
  return 2
end
if mode == 'init' then
  -- @silence: no trace of the namespace, for the silence, by the server's clock
  if redis.call('EXISTS', KEYS[4], KEYS[5], KEYS[8], KEYS[9]) > 0 then
    return 0
  end
  -- a registry entry is a trace unless it is a locker waiting for the
  -- first phase: no instance read, legacy, nothing held
  for _, raw in ipairs(redis.call('HVALS', KEYS[7])) do
    local ok, e = pcall(cjson.decode, raw)
    if not ok or type(e) ~= 'table' or e['ns_init'] ~= 0 or e['phase'] ~= 'legacy'
      or (e['next'] ~= nil and e['next'] ~= 'legacy') or e['held_newest'] ~= nil then
      return 0
    end
  end
  if silence > 0 then
    local since = tonumber(redis.call('GET', KEYS[6]) or '')
    if since == nil or since > now_ms then
      redis.call('SET', KEYS[6], string.format('%.0f', now_ms))
      return -silence
    end
    if now_ms - since < silence then
      return -(silence - (now_ms - since))
    end
  end
  redis.call('DEL', KEYS[6])
end
local ns = redis.call('HMGET', KEYS[4], 'gen', 'highest', 'init')
local mark = redis.call('HMGET', KEYS[5], 'gen', 'highest', 'init')
local gen = math.max(now_us, (tonumber(ns[1]) or 0) + 1, (tonumber(mark[1]) or 0) + 1, min_gen)
local highest = to
for _, h in ipairs({ns[2], mark[2]}) do
  if rank[h] ~= nil and rank[h] > rank[highest] then
    highest = h
  end
end
local init = ns[3]
if (init == false or init == nil) and mode == 'repair' then
  init = mark[3]
end
if init == false or init == nil then
  if keep_init > 0 then
    init = string.format('%.0f', keep_init)
  else
    init = string.format('%.0f', now_us)
  end
end
-- @history: a set (a forced step too) that finds another replication id
-- recorded than the server's stamps "restored" as it records the new one:
-- the wait a failover or a restart calls for outlives the override
local recorded = redis.call('HGET', KEYS[4], 'replid')
if mode ~= 'init' and recorded ~= replid then
  redis.call('HSET', KEYS[4], 'restored', string.format('%.0f', now_ms))
end
redis.call('SET', KEYS[1], to)
redis.call('SET', KEYS[3], string.format('%.0f', now_ms))
redis.call('HSET', KEYS[4], 'protocol', '3', 'phase', to, 'highest', highest,
  'gen', string.format('%.0f', gen), 'init', init, 'replid', replid)
if mode == 'repair' then
  -- @restored: the evidence lost with the namespace refills from here
  redis.call('HSET', KEYS[4], 'restored', string.format('%.0f', now_ms))
end
-- @mark: what a flush of the namespace's keys leaves
redis.call('HSET', KEYS[5], 'phase', to, 'highest', highest,
  'gen', string.format('%.0f', gen), 'init', init, 'at', string.format('%.0f', now_ms))
redis.call(pub, KEYS[2], to)
return 1
