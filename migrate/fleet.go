package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// ProtocolVersion is the version of the namespace and registry format this
// package writes (docs/protocol.md). Version 1 is the format of the first
// release: registry entries in the hash lockbridge:{ns}:fleet with times of
// the client's clock, and no namespace hash.
const ProtocolVersion = 2

// Member is one registry entry — a member of the fleet — as the controller judges it. Every time in
// it is the server's: stamped and aged by the server's TIME inside scripts.
type Member struct {
	ID string
	// Protocol is the entry's format: 2, or 1 for an entry of the first
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

// entry is a registry entry of protocol 2 as a client writes it. The
// format is exact (docs/protocol.md): these fields, integers as JSON
// integers, phases by name, held_* all present or all absent.
type entry struct {
	V          int    `json:"v"`
	ID         string `json:"id"`
	Phase      string `json:"phase"`
	Next       string `json:"next,omitempty"`
	Host       string `json:"host"`
	PID        int    `json:"pid"`
	Instance   int64  `json:"ns_init"`
	Gen        int64  `json:"gen"`
	Seq        int64  `json:"seq,omitempty"`
	HeldOldest string `json:"held_oldest,omitempty"`
	HeldNewest string `json:"held_newest,omitempty"`
	HeldMS     *int64 `json:"held_ms,omitempty"`
}

// parseEntry checks an entry of protocol 2 field by field.
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
	if v != ProtocolVersion {
		return bad("v", "protocol %d, want %d", v, ProtocolVersion)
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
	if _, ok := m["seq"]; ok {
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
// unreadable), and the server's time.
type syncReply struct {
	phase         string
	instance, gen int64
	hasNS         bool
	serverMS      int64
}

// heartbeat writes the client's entry, with an expiry hold after the
// server's now, and reads the phase.
func (s store) heartbeat(ctx context.Context, e entry, hold time.Duration) (syncReply, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return syncReply{}, fmt.Errorf("migrate: heartbeat: %w", err)
	}
	ms := hold.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	r, err := s.c.Eval(ctx, heartbeatScript, []string{s.k.phase, s.k.meta, s.k.clients, s.k.expiry, s.k.seen},
		e.ID, string(b), strconv.FormatInt(ms, 10))
	if err != nil {
		return syncReply{}, fmt.Errorf("migrate: heartbeat: %w", err)
	}
	a, ok := r.([]any)
	if !ok || len(a) != 4 {
		return syncReply{}, fmt.Errorf("migrate: heartbeat: unexpected reply %#v", r)
	}
	var out syncReply
	out.phase, _ = a[0].(string)
	init, _ := a[1].(string)
	gen, _ := a[2].(string)
	out.serverMS, _ = a[3].(int64)
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

// prune drops entries dead for longer than grace (server clock).
func (s store) prune(ctx context.Context, grace time.Duration) error {
	if _, err := s.c.Eval(ctx, pruneScript, []string{s.k.clients, s.k.expiry, s.k.seen}, strconv.FormatInt(grace.Milliseconds(), 10)); err != nil {
		return fmt.Errorf("migrate: prune registry: %w", err)
	}
	return nil
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
	// policy is the server's maxmemory-policy, or policyErr why it could
	// not be read; expiring the keys read that carry a TTL.
	policy, policyErr string
	expiring          []string
}

// read runs status.lua and parses what it read; margin is how long after
// its expiry an entry still counts as live.
func (s store) read(ctx context.Context, margin time.Duration) (snapshot, error) {
	k := s.k
	r, err := s.c.Eval(ctx, statusScript, []string{k.phase, k.since, k.meta, k.clients, k.expiry, k.seen, k.fleet, k.sighting, k.mark, k.pending})
	if err != nil {
		return snapshot{}, fmt.Errorf("migrate: read namespace %q: %w", s.k.ns, err)
	}
	a, ok := r.([]any)
	if !ok || len(a) != 13 {
		return snapshot{}, fmt.Errorf("migrate: read namespace %q: unexpected reply %#v", s.k.ns, r)
	}
	var sn snapshot
	nowMS, _ := a[0].(int64)
	sn.now = time.UnixMilli(nowMS)
	sn.phase, sn.hasPhase = a[1].(string)
	sn.since, sn.hasSince = a[2].(string)
	sn.meta = pairs(a[3])
	sn.mark = pairs(a[9])
	sn.pending, _ = a[10].(string)
	if pol, ok := a[11].([]any); ok && len(pol) == 2 {
		sn.policy, _ = pol[0].(string)
		sn.policyErr, _ = pol[1].(string)
	} else {
		sn.policyErr = fmt.Sprintf("unexpected reply %#v", a[11])
	}
	exp, _ := a[12].([]any)
	for _, k := range exp {
		if s, ok := k.(string); ok {
			sn.expiring = append(sn.expiring, s)
		}
	}
	entries := pairs(a[4])
	expiry := pairs(a[5])
	seen := pairs(a[6])
	for id, raw := range entries {
		c, err := parseEntry(id, raw)
		c.Invalid = err
		if v, ok := seen[id]; ok {
			if ms, ok := score(v); ok {
				c.Seen = time.UnixMilli(ms)
			}
		}
		if v, ok := expiry[id]; ok {
			if ms, ok := score(v); ok {
				c.Expires = time.UnixMilli(ms)
			}
		}
		c.Live = c.Expires.IsZero() || sn.now.Before(c.Expires.Add(margin))
		sn.clients = append(sn.clients, c)
	}
	for id, v := range expiry { // an expiry without an entry: someone wrote half of one
		if _, ok := entries[id]; !ok {
			c := Member{ID: id, Protocol: ProtocolVersion, Invalid: &EntryError{ID: id, Problem: "an expiry in " + s.k.expiry + " without an entry in " + s.k.clients}}
			if ms, ok := score(v); ok {
				c.Expires = time.UnixMilli(ms)
			}
			c.Live = c.Expires.IsZero() || sn.now.Before(c.Expires.Add(margin))
			sn.clients = append(sn.clients, c)
		}
	}
	for id, raw := range pairs(a[7]) {
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
	for f, v := range pairs(a[8]) {
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
	return sn, nil
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
