package modern

import "github.com/lockbridge/lockbridge/internal/protocol/modernproto"

// The scripts are internal/protocol/modernproto's (the body files there say their
// KEYS, ARGV and replies; the functions they call are fragments in
// internal/protocol/luafrag, which migrate's scripts reuse), shared with redlock.
// docs/protocol.md describes them for other languages.

// Script result codes shared by release, refresh and ttl (and the first
// element of acquire's reply).
const (
	codeOurs   = modernproto.Ours   // ours: done (acquired, released, refreshed)
	codeTaken  = modernproto.Taken  // another holder's value
	codeAbsent = modernproto.Absent // no key: expired (or never set)
)
