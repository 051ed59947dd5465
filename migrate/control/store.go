package control

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/migrate"
)

// Member is one registry entry — a member of the fleet — as the controller judges it. Every time in
// it is the server's: stamped and aged by the server's TIME inside scripts.
type Member struct {
	ID string
	// Protocol is the entry's format: 3; 2 for an entry of the previous
	// release (a blocker while it lives), or 1 for an entry of the first
	// release's format (which the controller cannot judge: a blocker).
	Protocol int
	// Phase is the phase the client ran at its last heartbeat.
	Phase migrate.Phase
	// Next is the phase it was about to move to then (0 when none): a
	// client announces a phase before it runs it, so the controller counts
	// it in both.
	Next migrate.Phase
	Host string
	PID  int
	// HeldOldest and HeldNewest are the oldest and newest phases of the
	// locks the client held at its last heartbeat (0 when none), and
	// HeldLeft how long the last of them still had to run then.
	HeldOldest, HeldNewest migrate.Phase
	heldLeft               time.Duration
	// instance and gen are the namespace instance and generation the client
	// last read (0 when none).
	instance, gen int64
	// Seen is its last heartbeat; Expires when it may last lock in Phase
	// (its phase lease and longest lease after Seen). Zero when unknown.
	Seen, Expires time.Time
	// Live reports whether the client may still lock in Phase (or hold a
	// lock of HeldOldest…HeldNewest): Expires plus the controller's margin
	// is still ahead by the server's clock. An entry the controller cannot
	// judge (Protocol 1, Invalid, no expiry) counts as live.
	Live bool
	// Invalid is why the entry does not parse (an error naming the field; Blocker.Field has it), nil when it
	// does. Such an entry is a blocker, never skipped.
	Invalid error
}

// Phases returns every phase the client may lock or hold a lock in: its
// phase, the one it announced, and those of its held locks.
func (c Member) Phases() []migrate.Phase {
	var out []migrate.Phase
	for p := migrate.PhaseLegacy; p <= migrate.PhaseModern; p++ {
		if p == c.Phase || p == c.Next || p == c.HeldOldest || p == c.HeldNewest {
			out = append(out, p)
		}
	}
	return out
}

// Sighting is the latest evidence that a legacy-only locker still exists: a
// DualWrite or DualRead locker met a live legacy lock with no modern key.
type Sighting struct {
	At    time.Time // by the server's clock; zero when none was ever recorded
	Key   string    // the legacy key met then
	Count int64     // sightings recorded in this namespace
}

// pruneBatch is how many entries one prune.lua call drops at most, and
// scanCount the SCAN COUNT of one registry_read.lua chunk: each call stays
// well under a millisecond of the server's time.
const (
	pruneBatch = 200
	scanCount  = 200
)

// prune drops entries dead for longer than grace (server clock), in calls
// of at most pruneBatch.
func (s store) prune(ctx context.Context, grace time.Duration) error {
	for i := 0; i < 1000; i++ {
		a := migrateproto.PruneArgs{NS: s.k, Grace: grace, Batch: pruneBatch}
		r, err := s.c.Eval(ctx, migrateproto.PruneScript, a.Keys(), a.Argv()...)
		if err != nil {
			return fmt.Errorf("migrate: prune registry: %w", err)
		}
		if n, _ := r.(int64); n < pruneBatch {
			return nil
		}
	}
	return nil
}

// notify publishes phase on every sharded notice channel (a follower of
// protocol 3 listens on one of them), each its own call: one PUBLISH to
// every follower at once would hold the server for as long as it takes to
// write to all of them. The calls go out together (a fleet busy reading
// after the first notices would keep a call waiting behind the next), and
// all have returned when it does. Best effort: a follower that misses the
// notice reads the phase at its next heartbeat.
func (s store) notify(ctx context.Context, phase migrate.Phase) error {
	cmd := notify.PublishCommand(s.c)
	errs := make([]error, migrateproto.NoticeShards)
	var wg sync.WaitGroup
	for i := 0; i < migrateproto.NoticeShards; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = s.c.Do(ctx, cmd, s.k.Shard(i), phase.String())
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// setPhase runs phase_set.lua: seen is the phase key's value the caller
// read ("" when absent), mode migrateproto.PhaseSetStep, PhaseSetInit or
// PhaseSetRepair, by what a step was judged on.
func (s store) setPhase(ctx context.Context, seen string, to migrate.Phase, mode string, minGen, keepInit int64,
	by judged) error {
	_, err := s.phaseSet(ctx, migrateproto.PhaseSetArgs{Seen: seen, To: to.String(), Mode: mode, MinGen: minGen,
		KeepInit: keepInit, Replid: by.replid, Judged: by.reading})
	return err
}

// recordHistory records that the server's replication id is replid, not
// the one the namespace recorded (a failover or a restart since): it
// stamps "restored" as a repair does, so the evidence those may have lost
// has time to come back before a step relies on its absence. seen is the
// phase the caller read.
func (s store) recordHistory(ctx context.Context, seen migrate.Phase, replid string) error {
	_, err := s.phaseSet(ctx, migrateproto.PhaseSetArgs{Seen: seen.String(), To: seen.String(),
		Mode: migrateproto.PhaseSetHistory, Replid: replid})
	if errors.Is(err, errHistoryChanged) {
		return nil // recorded
	}
	return err
}

// errStale: a step or a repair judged on another generation of the
// namespace or its mark (a set since its reading), or that reached the
// server more than the step window after its reading. Nothing was set.
var errStale = fmt.Errorf("%w: the namespace was set since the reading the change was judged on, or the change "+
	"reached the server more than the step window after it: nothing set; read the fleet again", errPhaseChanged)

// errHistoryChanged: the server's replication id is not the one the step
// was judged by — a failover or a restart between the reading and the
// step. Nothing was set; the change is recorded as a restore.
var errHistoryChanged = errors.New("migrate: the server's replication id changed since the reading (a failover or a " +
	"restart): nothing set, the change recorded")

// initPhase runs phase_set.lua's init: it sets to (true) once the
// namespace has shown no trace for silence by the server's clock; until
// then it returns how long is left (the first call starts the count). An
// error wraps ErrAlreadyInitialized when a phase appeared meanwhile, and
// errNotEmpty when another trace of the namespace did.
func (s store) initPhase(ctx context.Context, to migrate.Phase, silence time.Duration) (left time.Duration, err error) {
	return s.phaseSet(ctx, migrateproto.PhaseSetArgs{To: to.String(), Mode: migrateproto.PhaseSetInit, Silence: silence})
}

// errNotEmpty: an init found a trace of the namespace (its hash, mark,
// registry or sighting) that its reading had not.
var errNotEmpty = errors.New("migrate: the namespace shows it ran")

func (s store) phaseSet(ctx context.Context, a migrateproto.PhaseSetArgs) (time.Duration, error) {
	a.NS, a.Publish = s.k, notify.PublishCommand(s.c)
	seen, mode := a.Seen, a.Mode
	r, err := s.c.Eval(ctx, migrateproto.PhaseSetScript, a.Keys(), a.Argv()...)
	if err != nil {
		return 0, fmt.Errorf("migrate: set phase: %w", err)
	}
	switch n, ok := r.(int64); {
	case ok && n == migrateproto.PhaseSetDone:
		return 0, nil
	case ok && n == migrateproto.PhaseSetTraced:
		return 0, errNotEmpty
	case ok && n == migrateproto.PhaseSetHistoryChanged:
		return 0, errHistoryChanged
	case ok && n == migrateproto.PhaseSetStale:
		return 0, errStale
	case ok && n < 0: // an init's silence left, in ms
		return time.Duration(-n) * time.Millisecond, nil
	case mode == migrateproto.PhaseSetInit:
		return 0, fmt.Errorf("%w: the phase key holds %q now", ErrAlreadyInitialized, fmt.Sprint(r))
	}
	return 0, fmt.Errorf("migrate: %w: the phase key holds %q now, not %q", errPhaseChanged, fmt.Sprint(r), seen)
}

// snapshot is everything status.lua read, at the server's time now.
type snapshot struct {
	now          time.Time
	phase        string
	hasPhase     bool
	since        string
	hasSince     bool
	meta         map[string]string
	clients      []Member
	sighting     Sighting
	sightingErrs []string
	mark         map[string]string
	pending      string // the init-pending stamp ("" when absent)
	// fleet1 and sightingRaw are the protocol-1 registry and the sighting
	// hash as read, for judgeRegistry; sizes the registry hash's and its
	// expiry set's.
	fleet1, sightingRaw map[string]string
	sizes               [2]int64
	// policy is the server's maxmemory-policy, or policyErr why it could
	// not be read; expiring the keys read that carry a TTL.
	policy, policyErr string
	expiring          []string
	// replid is the server's replication id, or replidErr why it could not
	// be read; the namespace hash's "replid" is the one last recorded.
	replid, replidErr string
}

// read runs status.lua, then reads the registry in chunks
// (registry_read.lua), then status.lua again: when the phase, its since or
// the namespace hash changed meanwhile it reads again (a few times, then
// fails). Entries are judged at the first reading's now: an expiry read
// later can only be later, so no entry looks deader than it was. A SCAN
// returns every entry present throughout; one that joined meanwhile is a
// locker that read the phase the first reading saw, or one that runs
// nothing yet — one whose locks may still live keeps a live entry — and
// an entry that moved meanwhile moved towards that phase, the only one
// the phase key held. margin is how long after its expiry an entry still
// counts as live.
func (s store) read(ctx context.Context, margin time.Duration) (snapshot, error) {
	for try := 0; try < 3; try++ {
		sn, err := s.head(ctx)
		if err != nil {
			return snapshot{}, err
		}
		reg, err := s.registry(ctx, sn.sizes)
		if err != nil {
			return snapshot{}, err
		}
		again, err := s.head(ctx)
		if err != nil {
			return snapshot{}, err
		}
		if again.phase != sn.phase || again.hasPhase != sn.hasPhase || again.since != sn.since ||
			again.meta["gen"] != sn.meta["gen"] || again.meta["init"] != sn.meta["init"] {
			continue
		}
		if again.sizes[0] != again.sizes[1] && !reg.orphansRead {
			if reg.orphans, err = s.orphans(ctx); err != nil {
				return snapshot{}, err
			}
		}
		sn.judgeRegistry(reg, s.entries.members(reg.entries), margin, s.k.Expiry)
		return sn, nil
	}
	return snapshot{}, fmt.Errorf("migrate: read namespace %q: %w: the phase changed during each of 3 readings", s.k.NS,
		errPhaseChanged)
}

// registryRead is the protocol-3 registry as read in chunks.
type registryRead struct {
	entries, expiry, seen, orphans map[string]string
	orphansRead                    bool
}

// registry reads the registry hash (with each entry's scores), a SCAN
// chunk per call; then, when the sizes status.lua read differ (every
// script changes the hash and the expiry set together: a difference is an
// entry or an expiry written or deleted by hand) or an entry had no expiry,
// the expiries without an entry.
func (s store) registry(ctx context.Context, sizes [2]int64) (registryRead, error) {
	reg := registryRead{entries: map[string]string{}, expiry: map[string]string{}, seen: map[string]string{}}
	err := s.scan(ctx, migrateproto.RegistryEntries, func(a []any) error {
		if len(a) != 4 {
			return fmt.Errorf("unexpected reply %#v", a)
		}
		flat, _ := a[1].([]any)
		exp, _ := a[2].([]any)
		seen, _ := a[3].([]any)
		for i := 0; i+1 < len(flat); i += 2 {
			id, _ := flat[i].(string)
			reg.entries[id], _ = flat[i+1].(string)
			if j := i / 2; j < len(exp) && j < len(seen) {
				if v, ok := exp[j].(string); ok {
					reg.expiry[id] = v
				}
				if v, ok := seen[j].(string); ok {
					reg.seen[id] = v
				}
			}
		}
		return nil
	})
	if err != nil {
		return reg, err
	}
	if sizes[0] != sizes[1] || len(reg.expiry) != len(reg.entries) {
		reg.orphansRead = true
		reg.orphans, err = s.orphans(ctx)
	}
	return reg, err
}

// orphans reads the expiries without an entry, a SCAN chunk per call.
func (s store) orphans(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	err := s.scan(ctx, migrateproto.RegistryOrphans, func(a []any) error {
		for id, v := range pairs(a[1]) {
			out[id] = v
		}
		return nil
	})
	return out, err
}

// scan runs registry_read.lua in mode from cursor 0 to 0, handing each
// reply (at least {cursor, flat}) to f.
func (s store) scan(ctx context.Context, mode string, f func([]any) error) error {
	a := migrateproto.RegistryReadArgs{NS: s.k, Mode: mode, Cursor: "0", Count: scanCount}
	for {
		r, err := s.c.Eval(ctx, migrateproto.RegistryReadScript, a.Keys(), a.Argv()...)
		if err != nil {
			return fmt.Errorf("migrate: read namespace %q: registry: %w", s.k.NS, err)
		}
		reply, _ := r.([]any)
		if len(reply) < 2 {
			return fmt.Errorf("migrate: read namespace %q: registry: unexpected reply %#v", s.k.NS, r)
		}
		if err := f(reply); err != nil {
			return fmt.Errorf("migrate: read namespace %q: registry: %w", s.k.NS, err)
		}
		a.Cursor, _ = reply[0].(string)
		if a.Cursor == "0" || a.Cursor == "" {
			return nil
		}
	}
}

// head runs status.lua: everything but the protocol-3 registry.
func (s store) head(ctx context.Context) (snapshot, error) {
	args := migrateproto.StatusArgs{NS: s.k}
	r, err := s.c.Eval(ctx, migrateproto.StatusScript, args.Keys(), args.Argv()...)
	if err != nil {
		return snapshot{}, fmt.Errorf("migrate: read namespace %q: %w", s.k.NS, err)
	}
	a, ok := r.([]any)
	if !ok || len(a) != 12 {
		return snapshot{}, fmt.Errorf("migrate: read namespace %q: unexpected reply %#v", s.k.NS, r)
	}
	var sn snapshot
	nowMS, _ := a[0].(int64)
	sn.now = time.UnixMilli(nowMS)
	sn.phase, sn.hasPhase = a[1].(string)
	sn.since, sn.hasSince = a[2].(string)
	sn.meta = pairs(a[3])
	sn.fleet1 = pairs(a[4])
	sn.sightingRaw = pairs(a[5])
	sn.mark = pairs(a[6])
	sn.pending, _ = a[7].(string)
	if pol, ok := a[8].([]any); ok && len(pol) == 2 {
		sn.policy, _ = pol[0].(string)
		sn.policyErr, _ = pol[1].(string)
	} else {
		sn.policyErr = fmt.Sprintf("unexpected reply %#v", a[8])
	}
	exp, _ := a[9].([]any)
	for _, k := range exp {
		if s, ok := k.(string); ok {
			sn.expiring = append(sn.expiring, s)
		}
	}
	if sz, ok := a[10].([]any); ok && len(sz) == 2 {
		sn.sizes[0], _ = sz[0].(int64)
		sn.sizes[1], _ = sz[1].(int64)
	}
	if id, ok := a[11].([]any); ok && len(id) == 2 {
		sn.replid, _ = id[0].(string)
		sn.replidErr, _ = id[1].(string)
	} else {
		sn.replidErr = fmt.Sprintf("unexpected reply %#v", a[11])
	}
	if sn.replid == "" && sn.replidErr == "" {
		sn.replidErr = "no replication id"
	}
	return sn, nil
}

// judgeRegistry turns what the readings found (the entries parsed, by id)
// into sn's members and sighting, judging liveness at sn.now.
func (sn *snapshot) judgeRegistry(reg registryRead, parsed map[string]Member, margin time.Duration, expiryKey string) {
	live := func(c *Member) { c.Live = c.Expires.IsZero() || sn.now.Before(c.Expires.Add(margin)) }
	for id := range reg.entries {
		c := parsed[id]
		if v, ok := reg.seen[id]; ok {
			if ms, ok := score(v); ok {
				c.Seen = time.UnixMilli(ms)
			}
		}
		if v, ok := reg.expiry[id]; ok {
			if ms, ok := score(v); ok {
				c.Expires = time.UnixMilli(ms)
			}
		}
		live(&c)
		sn.clients = append(sn.clients, c)
	}
	for id, v := range reg.orphans { // an expiry without an entry: someone wrote half of one
		if _, ok := reg.entries[id]; ok {
			continue // the entry came meanwhile
		}
		c := Member{ID: id, Protocol: migrateproto.Version, Invalid: &migrateproto.EntryError{ID: id,
			Problem: "an expiry in " + expiryKey + " without an entry"}}
		if ms, ok := score(v); ok {
			c.Expires = time.UnixMilli(ms)
		}
		live(&c)
		sn.clients = append(sn.clients, c)
	}
	for id, raw := range sn.fleet1 {
		sn.clients = append(sn.clients, memberOfV1(id, raw))
	}
	sort.Slice(sn.clients, func(i, j int) bool {
		if sn.clients[i].ID != sn.clients[j].ID {
			return sn.clients[i].ID < sn.clients[j].ID
		}
		return sn.clients[i].Protocol > sn.clients[j].Protocol
	})
	sn.judgeSighting()
}

// judgeSighting parses the sighting hash read, and the copy of its time in
// the namespace hash, into sn's sighting; what does not parse goes to
// sightingErrs.
func (sn *snapshot) judgeSighting() {
	for f, v := range sn.sightingRaw {
		switch f {
		case "at":
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms >= 0 {
				sn.sighting.At = time.UnixMilli(ms)
			} else {
				sn.sightingErrs = append(sn.sightingErrs, fmt.Sprintf("field \"at\" holds %q, not Unix milliseconds", v))
			}
		case "key":
			sn.sighting.Key = v
		case "count":
			var err error
			if sn.sighting.Count, err = strconv.ParseInt(v, 10, 64); err != nil {
				sn.sightingErrs = append(sn.sightingErrs, fmt.Sprintf("field \"count\" holds %q, not an integer", v))
			}
		}
	}
	// The copy in the namespace hash (sighting.lua): the sighting hash may
	// have been evicted without it.
	if v, ok := sn.meta["sighting-at"]; ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err != nil || ms < 0 {
			sn.sightingErrs = append(sn.sightingErrs,
				fmt.Sprintf("the namespace hash's field \"sighting-at\" holds %q, not Unix milliseconds", v))
		} else if at := time.UnixMilli(ms); at.After(sn.sighting.At) {
			sn.sighting.At = at
		}
	}
}

func pairs(v any) map[string]string {
	flat, _ := v.([]any)
	out := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		val, _ := flat[i+1].(string)
		out[k] = val
	}
	return out
}

// score reads a sorted-set score of whole milliseconds.
func score(s string) (int64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

const pkg = "control"

// store reads and writes a namespace's phase, registry and sightings.
type store struct {
	c       driver.Client
	k       migrateproto.Keys
	entries *entryCache // the registry entries parsed at the last reading
}

// phaseOf reads a phase exactly as stored.
func phaseOf(s string) (migrate.Phase, error) {
	p, err := migrateproto.PhaseByName(s)
	return migrate.Phase(p), err
}

// phaseOrNone names p, or "none" for no phase.
func phaseOrNone(p migrate.Phase) string {
	if p == 0 {
		return "none"
	}
	return p.String()
}

// memberOf parses a registry entry of protocol 3 (or 2) into a Member;
// Invalid says why it does not parse.
func memberOf(id, raw string) Member {
	e, err := migrateproto.ParseEntry(id, raw)
	m := Member{ID: id, Protocol: migrateproto.Version, Invalid: err}
	if e.V == 2 || e.V == migrateproto.Version {
		m.Protocol = e.V
	}
	if err != nil {
		return m
	}
	m.Phase, _ = phaseOf(e.Phase)
	m.Next, _ = phaseOf(e.Next)
	m.Host, m.PID, m.instance, m.gen = e.Host, e.PID, e.Instance, e.Gen
	if e.HeldMS != nil {
		m.HeldOldest, _ = phaseOf(e.HeldOldest)
		m.HeldNewest, _ = phaseOf(e.HeldNewest)
		m.heldLeft = time.Duration(*e.HeldMS) * time.Millisecond
	}
	return m
}

// memberOfV1 parses an entry of the protocol-1 registry into a Member,
// live: the controller cannot judge it.
func memberOfV1(id, raw string) Member {
	e, err := migrateproto.ParseEntryV1(id, raw)
	m := Member{ID: id, Protocol: 1, Live: true, Invalid: err}
	if err == nil {
		m.Phase, _ = phaseOf(e.Phase)
		m.Host, m.PID, m.Seen, m.Expires = e.Host, e.PID, e.Seen, e.Expires
	}
	return m
}
