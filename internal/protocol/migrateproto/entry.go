package migrateproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// Version is the version of the namespace and registry format written
// (docs/protocol.md). Version 1 is the format of the first release:
// registry entries in the hash lockbridge:{ns}:fleet with times of the
// client's clock, and no namespace hash. Version 2 added the namespace hash
// and the registry of lockbridge:{ns}:clients, judged by the server's clock.
// Version 3 keeps its keys; its entries begin {"v":3,"seq":N, so a
// heartbeat checks them without decoding JSON, and a heartbeat whose entry
// has not changed sends none (a touch); its followers heartbeat less often
// while they hear the phase notices, which go out on sharded channels.
const Version = 3

// PhaseNames are the phases' names as stored, by number (1 legacy to 4
// modern); 0 is not a phase.
var PhaseNames = [...]string{1: "legacy", 2: "dual-write", 3: "dual-read", 4: "modern"}

// PhaseByName accepts a phase exactly as stored, and returns its number.
func PhaseByName(s string) (int, error) {
	for p := 1; p < len(PhaseNames); p++ {
		if PhaseNames[p] == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%q is not legacy, dual-write, dual-read or modern", s)
}

// Entry is a registry entry of protocol 3 as a client writes it. The
// format is exact (docs/protocol.md): these fields, integers as JSON
// integers, phases by name, held_* all present or all absent; v and seq
// first, in that order (heartbeat.lua checks the entry by that prefix).
type Entry struct {
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

// Same reports whether e and o say the same but for seq and held_ms: a
// heartbeat then only touches the stored entry. held_ms, how long the held
// locks had left, is for people; the hold renewed by the touch covers them.
func (e Entry) Same(o Entry) bool {
	e.Seq, o.Seq, e.HeldMS, o.HeldMS = 0, 0, nil, nil
	return e == o
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

// fields reads one entry's JSON object field by field, keeping the first
// problem.
type fields struct {
	id  string
	m   map[string]json.RawMessage
	err *EntryError
}

func newFields(id, raw string) *fields {
	f := &fields{id: id}
	if err := json.Unmarshal([]byte(raw), &f.m); err != nil || f.m == nil {
		f.fail("", "not a JSON object")
	}
	return f
}

func (f *fields) fail(field, format string, a ...any) {
	if f.err == nil {
		f.err = &EntryError{ID: f.id, Field: field, Problem: fmt.Sprintf(format, a...)}
	}
}

func (f *fields) has(k string) bool { _, ok := f.m[k]; return ok }

func (f *fields) str(k string) string {
	var s string
	if f.err == nil {
		if err := jsonString(f.m, k, &s); err != nil {
			f.fail(k, "%v", err)
		}
	}
	return s
}

func (f *fields) int(k string) int64 {
	if f.err != nil {
		return 0
	}
	n, err := jsonInt(f.m, k)
	if err != nil {
		f.fail(k, "%v", err)
	}
	return n
}

func (f *fields) phase(k string) string {
	s := f.str(k)
	if f.err == nil {
		if _, err := PhaseByName(s); err != nil {
			f.fail(k, "%v", err)
		}
	}
	return s
}

// ParseEntry checks an entry of protocol 3 (or 2: the previous release's,
// which differs only in where seq stands and that it is optional) field by
// field, and returns it.
func ParseEntry(id, raw string) (Entry, error) {
	f := newFields(id, raw)
	f.known()
	var e Entry
	e.V = f.version(raw)
	if e.ID = f.str("id"); f.err == nil && e.ID != id {
		f.fail("id", "%q differs from the registry field %q", e.ID, id)
	}
	e.Phase = f.phase("phase")
	if f.has("next") {
		if e.Next = f.phase("next"); f.err == nil && e.Next == e.Phase {
			f.fail("next", "equals phase %v (omit it when not moving)", e.Phase)
		}
	}
	e.Host = f.str("host")
	if pid, err := jsonInt(f.m, "pid"); f.err == nil && (err != nil || pid > 1<<31-1) {
		f.fail("pid", "want a JSON integer from 0 to 2147483647 (%v)", err)
	} else {
		e.PID = int(pid)
	}
	e.Instance, e.Gen = f.int("ns_init"), f.int("gen")
	if f.has("seq") || e.V == Version {
		e.Seq = f.seq()
	}
	f.held(&e)
	if f.err != nil {
		return e, f.err
	}
	return e, nil
}

// known fails on a field the format does not have.
func (f *fields) known() {
	for k := range f.m {
		switch k {
		case "v", "id", "phase", "next", "host", "pid", "ns_init", "gen", "seq", "held_oldest", "held_newest", "held_ms":
		default:
			f.fail(k, "unknown field (the format is exact: docs/protocol.md)")
		}
	}
}

// version reads v: Version or 2; an entry of Version begins with v and seq.
func (f *fields) version(raw string) int {
	v := int(f.int("v"))
	switch {
	case f.err == nil && v != Version && v != 2:
		f.fail("v", "protocol %d, want %d", v, Version)
	case f.err == nil && v == Version && !bytes.HasPrefix([]byte(raw), []byte(`{"v":3,"seq":`)):
		f.fail("seq", `a protocol-3 entry begins {"v":3,"seq":`)
	}
	return v
}

// seq reads seq, from 1 to 2^53-1.
func (f *fields) seq() int64 {
	seq, err := jsonInt(f.m, "seq")
	if f.err == nil && (err != nil || seq < 1 || seq > 1<<53-1) {
		f.fail("seq", "want a JSON integer from 1 to 2^53-1 (%v)", err)
		return 0
	}
	return seq
}

// held reads held_oldest, held_newest and held_ms, which go together.
func (f *fields) held(e *Entry) {
	o, n, ms := f.has("held_oldest"), f.has("held_newest"), f.has("held_ms")
	if f.err == nil && (o != n || n != ms) {
		f.fail("held_oldest", "held_oldest, held_newest and held_ms go together")
	}
	if !o || f.err != nil {
		return
	}
	e.HeldOldest, e.HeldNewest = f.phase("held_oldest"), f.phase("held_newest")
	if f.err == nil {
		if old, _ := PhaseByName(e.HeldOldest); mustPhase(e.HeldNewest) < old {
			f.fail("held_newest", "%v is older than held_oldest %v", e.HeldNewest, e.HeldOldest)
		}
	}
	left := f.int("held_ms")
	e.HeldMS = &left
}

func mustPhase(s string) int { p, _ := PhaseByName(s); return p }

func jsonString(m map[string]json.RawMessage, k string, out *string) error {
	raw, ok := m[k]
	if !ok {
		return fmt.Errorf("missing")
	}
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, out) != nil {
		return fmt.Errorf("want a JSON string, got %s", clip(raw))
	}
	return nil
}

// jsonInt reads a non-negative JSON integer: digits only, no sign, fraction,
// exponent or quotes (an epoch in a string, or 1.7e12, is refused).
func jsonInt(m map[string]json.RawMessage, k string) (int64, error) {
	raw, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("missing")
	}
	raw = bytes.TrimSpace(raw)
	bad := len(raw) == 0 || len(raw) > 18 || (len(raw) > 1 && raw[0] == '0')
	for _, b := range raw {
		bad = bad || b < '0' || b > '9'
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if bad || err != nil {
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

// EntryV1 is the registry entry of protocol 1 (the first release), for
// recognising one. Its times are its client's clock: nothing to judge.
type EntryV1 struct {
	ID            string
	Phase         string
	Host          string
	PID           int
	Seen, Expires time.Time
}

// ParseEntryV1 reads an entry of the protocol-1 hash. It recognises the
// first release's format, and names the field of anything else.
func ParseEntryV1(id, raw string) (EntryV1, error) {
	f := newFields(id, raw)
	keys := make([]string, 0, len(f.m))
	for k := range f.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var e EntryV1
	for _, k := range keys {
		switch k {
		case "id":
			e.ID = f.str(k)
		case "phase":
			e.Phase = f.phase(k)
		case "host":
			e.Host = f.str(k)
		case "pid":
			e.PID = int(f.int(k))
		case "seen":
			e.Seen = f.time(k)
		case "expires":
			e.Expires = f.time(k)
		default:
			f.fail(k, "unknown field")
		}
	}
	for _, k := range []string{"id", "phase", "seen", "expires"} {
		if !f.has(k) {
			f.fail(k, "missing")
		}
	}
	if f.err == nil && e.ID != id {
		f.fail("id", "%q differs from the registry field %q", e.ID, id)
	}
	if f.err != nil {
		return e, f.err
	}
	return e, nil
}

func (f *fields) time(k string) time.Time {
	s := f.str(k)
	if f.err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		f.fail(k, "want an RFC 3339 time with its zone, got %s", clip(f.m[k]))
	}
	return t
}
