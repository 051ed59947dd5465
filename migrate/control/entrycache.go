package control

import "sync"

// entryCache keeps the members parsed from the registry entries of the
// last reading, by id and stored bytes. Parsing is a function of the two
// alone, and a fleet's entries change only when a locker moves phase or
// its holds change (a heartbeat that only renews touches the expiry, not
// the entry), so a Status after the first parses only what changed: at
// 10,000 lockers the parse was half of Status's time. It holds the last
// reading's entries only. Safe for concurrent use.
type entryCache struct {
	mu sync.Mutex
	m  map[string]parsedEntry
}

type parsedEntry struct {
	raw    string
	member Member // Seen, Expires and Live are not the entry's: set by the caller on its copy
}

// members returns the member of each entry (id -> raw), parsed by
// memberOf or taken from the last reading when its bytes are the same. A
// nil cache parses every entry.
func (ec *entryCache) members(entries map[string]string) map[string]Member {
	out := make(map[string]Member, len(entries))
	if ec == nil {
		for id, raw := range entries {
			out[id] = memberOf(id, raw)
		}
		return out
	}
	ec.mu.Lock()
	defer ec.mu.Unlock()
	next := make(map[string]parsedEntry, len(entries))
	for id, raw := range entries {
		p, ok := ec.m[id]
		if !ok || p.raw != raw {
			p = parsedEntry{raw: raw, member: memberOf(id, raw)}
		}
		next[id] = p
		out[id] = p.member
	}
	ec.m = next
	return out
}
