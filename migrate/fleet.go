package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// ProtocolVersion is the version of the namespace and registry format this
// package writes (docs/protocol.md). Version 1 is the format of the first
// release: registry entries in the hash lockbridge:{ns}:fleet with times of
// the client's clock, and no namespace hash. Version 2 added the namespace
// hash and the registry of lockbridge:{ns}:clients, judged by the server's
// clock. Version 3 keeps its keys; its entries begin {"v":3,"seq":N, so a
// heartbeat checks them without decoding JSON, and a heartbeat whose entry
// has not changed sends none (a touch); its followers heartbeat less often
// while they hear the phase notices, which go out on sharded channels.
const ProtocolVersion = 3

// Member is one registry entry — a member of the fleet — as the controller judges it. Every time in
// it is the server's: stamped and aged by the server's TIME inside scripts.
type Member struct {
	ID string
	// Protocol is the entry's format: 3; 2 for an entry of the previous
	// release (a blocker while it lives), or 1 for an entry of the first
	// release's format (which the controller cannot judge: a blocker).
	Protocol int
	// Phase is the phase the client ran at its last heartbeat.
	Phase Phase
	// Next is the phase it was about to move to then (0 when none): a
	// client announces a phase before it runs it, so the controller counts
	// it in both.
	Next Phase
	Host string
	PID  int
	// HeldOldest and HeldNewest are the oldest and newest phases of the
	// locks the client held at its last heartbeat (0 when none), and
	// HeldLeft how long the last of them still had to run then.
	HeldOldest, HeldNewest Phase
	HeldLeft               time.Duration
	// Instance and Gen are the namespace instance and generation the client
	// last read (0 when none).
	Instance, Gen int64
	// Seen is its last heartbeat; Expires when it may last lock in Phase
	// (its phase lease and longest lease after Seen). Zero when unknown.
	Seen, Expires time.Time
	// Live reports whether the client may still lock in Phase (or hold a
	// lock of HeldOldest…HeldNewest): Expires plus the controller's margin
	// is still ahead by the server's clock. An entry the controller cannot
	// judge (Protocol 1, Invalid, no expiry) counts as live.
	Live bool
	// Invalid is why the entry does not parse (an *EntryError), nil when it
	// does. Such an entry is a blocker, never skipped.
	Invalid error
	// Raw is the entry as stored.
	Raw string
}

// Phases returns every phase the client may lock or hold a lock in: its
// phase, the one it announced, and those of its held locks.
func (c Member) Phases() []Phase {
	var out []Phase
	for p := PhaseLegacy; p <= PhaseModern; p++ {
		if p == c.Phase || p == c.Next || p == c.HeldOldest || p == c.HeldNewest {
			out = append(out, p)
		}
	}
	return out
}

// EntryError is a registry entry that does not parse: the field, and what
// is wrong with it.
type EntryError struct {
	ID      string
	Field   string // "" for the entry as a whole
	Problem string
}

func (e *EntryError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("migrate: registry entry %q: %s", e.ID, e.Problem)
	}
	return fmt.Sprintf("migrate: registry entry %q: field %q: %s", e.ID, e.Field, e.Problem)
}

// Sighting is the latest evidence that a legacy-only locker still exists: a
// DualWrite or DualRead locker met a live legacy lock with no modern key.
type Sighting struct {
	At    time.Time // by the server's clock; zero when none was ever recorded
	Key   string    // the legacy key met then
	Count int64     // sightings recorded in this namespace
}

// entry is a registry entry of protocol 3 as a client writes it. The
// format is exact (docs/protocol.md): these fields, integers as JSON
// integers, phases by name, held_* all present or all absent; v and seq
// first, in that order (heartbeat.lua checks the entry by that prefix).
type entry struct {
	V          int    `json:"v"`
	Seq        int64  `json:"seq"`
	ID         string `json:"id"`
	Phase      string `json:"phase"`
	Next       string `json:"next,omitempty"`
	Host       string `json:"host"`
	PID        int    `json:"pid"`
	Instance   int64  `json:"ns_init"`
	Gen        int64  `json:"gen"`
	HeldOldest string `json:"held_oldest,omitempty"`
	HeldNewest string `json:"held_newest,omitempty"`
	HeldMS     *int64 `json:"held_ms,omitempty"`
}

// same reports whether e and o say the same but for seq and held_ms: a
// heartbeat then only touches the stored entry. held_ms, how long the held
// locks had left, is for people; the hold renewed by the touch covers them.
func (e entry) same(o entry) bool {
	e.Seq, o.Seq, e.HeldMS, o.HeldMS = 0, 0, nil, nil
	return e == o
}

// parseEntry checks an entry of protocol 3 (or 2: the previous release's,
// which differs only in where seq stands and that it is optional) field by
// field.
func parseEntry(id, raw string) (Member, error) {
	c := Member{ID: id, Protocol: ProtocolVersion, Raw: raw}
	bad := func(field, format string, a ...any) (Member, error) {
		return c, &EntryError{ID: id, Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
		return bad("", "not a JSON object")
	}
	for k := range m {
		switch k {
		case "v", "id", "phase", "next", "host", "pid", "ns_init", "gen", "seq", "held_oldest", "held_newest", "held_ms":
		default:
			return bad(k, "unknown field (the format is exact: docs/protocol.md)")
		}
	}
	v, err := jsonInt(m, "v", true)
	if err != nil {
		return bad("v", "%v", err)
	}
	if v != ProtocolVersion && v != 2 {
		return bad("v", "protocol %d, want %d", v, ProtocolVersion)
	}
	c.Protocol = int(v)
	if v == ProtocolVersion && !bytes.HasPrefix([]byte(raw), []byte(`{"v":3,"seq":`)) {
		return bad("seq", `a protocol-3 entry begins {"v":3,"seq":`)
	}
	var sid string
	if err := jsonString(m, "id", &sid, true); err != nil {
		return bad("id", "%v", err)
	}
	if sid != id {
		return bad("id", "%q differs from the registry field %q", sid, id)
	}
	var ph string
	if err := jsonString(m, "phase", &ph, true); err != nil {
		return bad("phase", "%v", err)
	}
	if c.Phase, err = phaseName(ph); err != nil {
		return bad("phase", "%v", err)
	}
	if _, ok := m["next"]; ok {
		if err := jsonString(m, "next", &ph, true); err != nil {
			return bad("next", "%v", err)
		}
		if c.Next, err = phaseName(ph); err != nil {
			return bad("next", "%v", err)
		}
		if c.Next == c.Phase {
			return bad("next", "equals phase %v (omit it when not moving)", c.Phase)
		}
	}
	if err := jsonString(m, "host", &c.Host, true); err != nil {
		return bad("host", "%v", err)
	}
	pid, err := jsonInt(m, "pid", true)
	if err != nil || pid > 1<<31-1 {
		return bad("pid", "want a JSON integer from 0 to 2147483647 (%v)", err)
	}
	c.PID = int(pid)
	if c.Instance, err = jsonInt(m, "ns_init", true); err != nil {
		return bad("ns_init", "%v", err)
	}
	if c.Gen, err = jsonInt(m, "gen", true); err != nil {
		return bad("gen", "%v", err)
	}
	if _, ok := m["seq"]; ok || v == ProtocolVersion {
		if seq, err := jsonInt(m, "seq", true); err != nil || seq < 1 || seq > 1<<53-1 {
			return bad("seq", "want a JSON integer from 1 to 2^53-1 (%v)", err)
		}
	}
	_, o := m["held_oldest"]
	_, n := m["held_newest"]
	_, ms := m["held_ms"]
	if o != n || n != ms {
		return bad("held_oldest", "held_oldest, held_newest and held_ms go together")
	}
	if o {
		var s string
		if err := jsonString(m, "held_oldest", &s, true); err != nil {
			return bad("held_oldest", "%v", err)
		}
		if c.HeldOldest, err = phaseName(s); err != nil {
			return bad("held_oldest", "%v", err)
		}
		if err := jsonString(m, "held_newest", &s, true); err != nil {
			return bad("held_newest", "%v", err)
		}
		if c.HeldNewest, err = phaseName(s); err != nil {
			return bad("held_newest", "%v", err)
		}
		if c.HeldNewest < c.HeldOldest {
			return bad("held_newest", "%v is older than held_oldest %v", c.HeldNewest, c.HeldOldest)
		}
		left, err := jsonInt(m, "held_ms", true)
		if err != nil {
			return bad("held_ms", "%v", err)
		}
		c.HeldLeft = time.Duration(left) * time.Millisecond
	}
	return c, nil
}

// phaseName accepts a phase exactly as String writes it.
func phaseName(s string) (Phase, error) {
	for p := PhaseLegacy; p <= PhaseModern; p++ {
		if phaseNames[p] == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%q is not legacy, dual-write, dual-read or modern", s)
}

func jsonString(m map[string]json.RawMessage, k string, out *string, required bool) error {
	raw, ok := m[k]
	if !ok {
		if required {
			return fmt.Errorf("missing")
		}
		return nil
	}
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, out) != nil {
		return fmt.Errorf("want a JSON string, got %s", clip(raw))
	}
	return nil
}

// jsonInt reads a non-negative JSON integer: digits only, no sign, fraction,
// exponent or quotes (an epoch in a string, or 1.7e12, is refused).
func jsonInt(m map[string]json.RawMessage, k string, required bool) (int64, error) {
	raw, ok := m[k]
	if !ok {
		if required {
			return 0, fmt.Errorf("missing")
		}
		return 0, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || len(raw) > 18 {
		return 0, fmt.Errorf("want a non-negative JSON integer, got %s", clip(raw))
	}
	for _, b := range raw {
		if b < '0' || b > '9' {
			return 0, fmt.Errorf("want a non-negative JSON integer, got %s", clip(raw))
		}
	}
	if len(raw) > 1 && raw[0] == '0' {
		return 0, fmt.Errorf("want a non-negative JSON integer, got %s", clip(raw))
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a non-negative JSON integer, got %s", clip(raw))
	}
	return n, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// entryV1 is the registry entry of protocol 1 (the first release), for
// recognising one. Its times are its client's clock: nothing to judge.
type entryV1 struct {
	ID      string    `json:"id"`
	Phase   Phase     `json:"phase"`
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	Seen    time.Time `json:"seen"`
	Expires time.Time `json:"expires"`
}

// parseEntryV1 reads an entry of the protocol-1 hash. It recognises the
// first release's format, and names the field of anything else.
func parseEntryV1(id, raw string) (Member, error) {
	c := Member{ID: id, Protocol: 1, Raw: raw, Live: true}
	bad := func(field, format string, a ...any) (Member, error) {
		return c, &EntryError{ID: id, Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
		return bad("", "not a JSON object")
	}
	var e entryV1
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		var err error
		switch k {
		case "id":
			err = jsonString(m, k, &e.ID, true)
		case "phase":
			var s string
			if err = jsonString(m, k, &s, true); err == nil {
				e.Phase, err = phaseName(s)
			}
		case "host":
			err = jsonString(m, k, &e.Host, true)
		case "pid":
			var n int64
			n, err = jsonInt(m, k, true)
			e.PID = int(n)
		case "seen", "expires":
			var s string
			if err = jsonString(m, k, &s, true); err == nil {
				var t time.Time
				if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
					err = fmt.Errorf("want an RFC 3339 time with its zone, got %s", clip(v))
				} else if k == "seen" {
					e.Seen = t
				} else {
					e.Expires = t
				}
			}
		default:
			err = fmt.Errorf("unknown field")
		}
		if err != nil {
			return bad(k, "%v", err)
		}
	}
	for _, k := range []string{"id", "phase", "seen", "expires"} {
		if _, ok := m[k]; !ok {
			return bad(k, "missing")
		}
	}
	c.Phase, c.Host, c.PID, c.Seen, c.Expires = e.Phase, e.Host, e.PID, e.Seen, e.Expires
	if e.ID != id {
		return bad("id", "%q differs from the registry field %q", e.ID, id)
	}
	return c, nil
}

// store reads and writes a namespace's phase, registry and sightings.
type store struct {
	c driver.Client
	k nsKeys
}

// syncReply is what a heartbeat read back: the phase key's value ("" when
// absent), the namespace's instance and generation (0 when absent, -1 when
// unreadable), the server's time, and what became of the entry (written).
type syncReply struct {
	phase         string
	instance, gen int64
	hasNS         bool
	serverMS      int64
	written       int64 // 1 landed, 0 a newer entry stood, -1 a touch found none
}

// heartbeat writes the client's entry — or, with touch, renews the stored
// one's expiry only — with an expiry hold after the server's now, and reads
// the phase.
func (s store) heartbeat(ctx context.Context, e entry, hold time.Duration, touch bool) (syncReply, error) {
	raw := ""
	if !touch {
		b, err := json.Marshal(e)
		if err != nil {
			return syncReply{}, fmt.Errorf("migrate: heartbeat: %w", err)
		}
		raw = string(b)
	}
	ms := hold.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	r, err := s.c.Eval(ctx, heartbeatScript, []string{s.k.phase, s.k.meta, s.k.clients, s.k.expiry, s.k.seen},
		e.ID, strconv.FormatInt(e.Seq, 10), strconv.FormatInt(ms, 10), raw)
	if err != nil {
		return syncReply{}, fmt.Errorf("migrate: heartbeat: %w", err)
	}
	a, ok := r.([]any)
	if !ok || len(a) != 5 {
		return syncReply{}, fmt.Errorf("migrate: heartbeat: unexpected reply %#v", r)
	}
	var out syncReply
	out.phase, _ = a[0].(string)
	init, _ := a[1].(string)
	gen, _ := a[2].(string)
	out.serverMS, _ = a[3].(int64)
	out.written, _ = a[4].(int64)
	if init != "" || gen != "" {
		out.hasNS = true
		out.instance, out.gen = decimal(init), decimal(gen)
	}
	return out, nil
}

// decimal reads a non-negative decimal; -1 when it is not one.
func decimal(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// forget removes id from both registries; unless force, it refuses (-1)
// while the entry is live by the server's clock plus margin.
func (s store) forget(ctx context.Context, id string, force bool, margin time.Duration) (int64, error) {
	r, err := s.c.Eval(ctx, forgetScript, []string{s.k.clients, s.k.expiry, s.k.seen, s.k.fleet}, id, flag(force), strconv.FormatInt(margin.Milliseconds(), 10))
	if err != nil {
		return 0, fmt.Errorf("migrate: forget client %q: %w", id, err)
	}
	n, _ := r.(int64)
	return n, nil
}

func (s store) leave(ctx context.Context, id string) error {
	_, err := s.forget(ctx, id, true, 0)
	return err
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
		r, err := s.c.Eval(ctx, pruneScript, []string{s.k.clients, s.k.expiry, s.k.seen}, strconv.FormatInt(grace.Milliseconds(), 10), strconv.Itoa(pruneBatch))
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
func (s store) notify(ctx context.Context, phase Phase) error {
	cmd := publishCommand(s.c)
	errs := make([]error, noticeShards)
	var wg sync.WaitGroup
	for i := 0; i < noticeShards; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = s.c.Do(ctx, cmd, s.k.shard(i), phase.String())
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s store) recordSighting(ctx context.Context, legacyKey string) error {
	if _, err := s.c.Eval(ctx, sightingScript, []string{s.k.sighting, s.k.meta}, legacyKey); err != nil {
		return fmt.Errorf("migrate: record legacy sighting: %w", err)
	}
	return nil
}

// setPhase runs phase_set.lua: seen is the phase key's value the caller
// read ("" when absent), mode "step", "init" or "repair".
func (s store) setPhase(ctx context.Context, seen string, to Phase, mode string, minGen, keepInit int64) error {
	_, err := s.phaseSet(ctx, seen, to, mode, minGen, keepInit, 0)
	return err
}

// initPhase runs phase_set.lua's init: it sets to (true) once the
// namespace has shown no trace for silence by the server's clock; until
// then it returns how long is left (the first call starts the count). An
// error wraps ErrAlreadyInitialized when a phase appeared meanwhile, and
// errNotEmpty when another trace of the namespace did.
func (s store) initPhase(ctx context.Context, to Phase, silence time.Duration) (left time.Duration, err error) {
	return s.phaseSet(ctx, "", to, "init", 0, 0, silence)
}

// errNotEmpty: an init found a trace of the namespace (its hash, mark,
// registry or sighting) that its reading had not.
var errNotEmpty = errors.New("migrate: the namespace shows it ran")

func (s store) phaseSet(ctx context.Context, seen string, to Phase, mode string, minGen, keepInit int64, silence time.Duration) (time.Duration, error) {
	k := s.k
	r, err := s.c.Eval(ctx, phaseSetScript, []string{k.phase, k.channel, k.since, k.meta, k.mark, k.pending, k.clients, k.sighting, k.fleet},
		seen, to.String(), publishCommand(s.c), strconv.FormatInt(minGen, 10), mode, strconv.FormatInt(keepInit, 10),
		strconv.FormatInt(silence.Milliseconds(), 10))
	if err != nil {
		return 0, fmt.Errorf("migrate: set phase: %w", err)
	}
	switch n, ok := r.(int64); {
	case ok && n == 1:
		return 0, nil
	case ok && n == 0:
		return 0, errNotEmpty
	case ok && n < 0:
		return time.Duration(-n) * time.Millisecond, nil
	case mode == "init":
		return 0, fmt.Errorf("%w: the phase key holds %q now", ErrAlreadyInitialized, fmt.Sprint(r))
	}
	return 0, fmt.Errorf("migrate: %w: the phase key holds %q now, not %q", ErrPhaseChanged, fmt.Sprint(r), seen)
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
		if again.phase != sn.phase || again.hasPhase != sn.hasPhase || again.since != sn.since || again.meta["gen"] != sn.meta["gen"] || again.meta["init"] != sn.meta["init"] {
			continue
		}
		if again.sizes[0] != again.sizes[1] && !reg.orphansRead {
			if reg.orphans, err = s.orphans(ctx); err != nil {
				return snapshot{}, err
			}
		}
		sn.judgeRegistry(reg, margin, s.k.expiry)
		return sn, nil
	}
	return snapshot{}, fmt.Errorf("migrate: read namespace %q: %w: the phase changed during each of 3 readings", s.k.ns, ErrPhaseChanged)
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
	err := s.scan(ctx, "entries", func(a []any) error {
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
	err := s.scan(ctx, "orphans", func(a []any) error {
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
	keys := []string{s.k.clients, s.k.expiry, s.k.seen}
	cursor := "0"
	for {
		r, err := s.c.Eval(ctx, registryReadScript, keys, mode, cursor, strconv.Itoa(scanCount))
		if err != nil {
			return fmt.Errorf("migrate: read namespace %q: registry: %w", s.k.ns, err)
		}
		a, _ := r.([]any)
		if len(a) < 2 {
			return fmt.Errorf("migrate: read namespace %q: registry: unexpected reply %#v", s.k.ns, r)
		}
		if err := f(a); err != nil {
			return fmt.Errorf("migrate: read namespace %q: registry: %w", s.k.ns, err)
		}
		cursor, _ = a[0].(string)
		if cursor == "0" || cursor == "" {
			return nil
		}
	}
}

// head runs status.lua: everything but the protocol-3 registry.
func (s store) head(ctx context.Context) (snapshot, error) {
	k := s.k
	r, err := s.c.Eval(ctx, statusScript, []string{k.phase, k.since, k.meta, k.clients, k.expiry, k.seen, k.fleet, k.sighting, k.mark, k.pending})
	if err != nil {
		return snapshot{}, fmt.Errorf("migrate: read namespace %q: %w", s.k.ns, err)
	}
	a, ok := r.([]any)
	if !ok || len(a) != 11 {
		return snapshot{}, fmt.Errorf("migrate: read namespace %q: unexpected reply %#v", s.k.ns, r)
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
	return sn, nil
}

// judgeRegistry parses what the readings found into sn's members and
// sighting, judging liveness at sn.now.
func (sn *snapshot) judgeRegistry(reg registryRead, margin time.Duration, expiryKey string) {
	live := func(c *Member) { c.Live = c.Expires.IsZero() || sn.now.Before(c.Expires.Add(margin)) }
	for id, raw := range reg.entries {
		c, err := parseEntry(id, raw)
		c.Invalid = err
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
		c := Member{ID: id, Protocol: ProtocolVersion, Invalid: &EntryError{ID: id, Problem: "an expiry in " + expiryKey + " without an entry"}}
		if ms, ok := score(v); ok {
			c.Expires = time.UnixMilli(ms)
		}
		live(&c)
		sn.clients = append(sn.clients, c)
	}
	for id, raw := range sn.fleet1 {
		c, err := parseEntryV1(id, raw)
		c.Invalid = err
		sn.clients = append(sn.clients, c)
	}
	sort.Slice(sn.clients, func(i, j int) bool {
		if sn.clients[i].ID != sn.clients[j].ID {
			return sn.clients[i].ID < sn.clients[j].ID
		}
		return sn.clients[i].Protocol > sn.clients[j].Protocol
	})
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
			sn.sightingErrs = append(sn.sightingErrs, fmt.Sprintf("the namespace hash's field \"sighting-at\" holds %q, not Unix milliseconds", v))
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
