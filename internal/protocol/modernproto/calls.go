package modernproto

import "time"

// The arguments of each script, one type per script: its fields are the
// KEYS and ARGV its body file's header declares, and keys and argv return
// them in that order (TestScriptHeaders checks the two against each other).
// The KEYS live in the lock's Names, bound once, so that a call allocates
// no slice of its own for them.

// acquireArgs are acquire.lua's: KEYS[1] the lock key and KEYS[2] its fence
// counter (with fencing), from names; ARGV[1] the token, ARGV[2] the lease.
type acquireArgs struct {
	names *Names
	token any
	ttl   time.Duration
}

func (a acquireArgs) keys() []string { return a.names.acquire }
func (a acquireArgs) argv() []any    { return []any{a.token, a.ttl.Milliseconds()} }

// releaseArgs are release.lua's: KEYS[1] the lock key and KEYS[2] its
// release channel (when it has one), from names; ARGV[1] the token, ARGV[2]
// the publish command.
type releaseArgs struct {
	names   *Names
	token   any
	publish any
}

func (a releaseArgs) keys() []string { return a.names.release }
func (a releaseArgs) argv() []any    { return []any{a.token, a.publish} }

// refreshArgs are refresh.lua's: KEYS[1] the lock key; ARGV[1] the token,
// ARGV[2] the new lease.
type refreshArgs struct {
	names *Names
	token any
	ttl   time.Duration
}

func (a refreshArgs) keys() []string { return a.names.acquire[:1] }
func (a refreshArgs) argv() []any    { return []any{a.token, a.ttl.Milliseconds()} }

// ttlArgs are ttl.lua's: KEYS[1] the lock key; ARGV[1] the token.
type ttlArgs struct {
	names *Names
	token any
}

func (a ttlArgs) keys() []string { return a.names.acquire[:1] }
func (a ttlArgs) argv() []any    { return []any{a.token} }
