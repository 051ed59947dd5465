package legacy

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/protocol/luafrag"
)

// The shared Lua fragments (internal/protocol/luafrag), in dependency order.
const (
	fragArgs       = "args.lua"
	fragDecode     = "legacy_decode.lua"
	fragLegacyArgs = "legacy_args.lua"
	fragExpired    = "legacy_expired.lua"
	fragNow        = "legacy_now.lua"
	fragOwner      = "legacy_owner.lua"
)

var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/refresh.lua
	refreshSrc string
)

// The scripts of the atomic mode. Each is built once; a *driver.Script is
// immutable.
var (
	acquireScript = luafrag.Script("legacy/scripts/acquire.lua", acquireSrc,
		fragArgs, fragDecode, fragLegacyArgs, fragExpired)
	releaseScript = luafrag.Script("legacy/scripts/release.lua", releaseSrc,
		fragArgs, fragDecode, fragLegacyArgs, fragNow, fragOwner)
	refreshScript = luafrag.Script("legacy/scripts/refresh.lua", refreshSrc,
		fragArgs, fragDecode, fragLegacyArgs, fragNow, fragOwner)
)

// The arguments of each script, one type per script: its fields are the
// KEYS and ARGV the script's header declares, and keys and argv return them
// in that order (TestScriptHeaders checks the two against each other).

// acquireArgs are acquire.lua's KEYS and ARGV.
type acquireArgs struct {
	key    string // KEYS[1]: the lock key, encoded
	value  string // ARGV[1]: our expiry in the value codec's bytes
	codec  string // ARGV[2]: the value codec id
	cutoff string // ARGV[3]: the takeover cutoff, in the profile's unit
	safety any    // ARGV[4]: the safety TTL in milliseconds, "0" for none
}

func (a acquireArgs) keys() []string { return []string{a.key} }
func (a acquireArgs) argv() []any    { return []any{a.value, a.codec, a.cutoff, a.safety} }

// releaseArgs are release.lua's KEYS and ARGV. The key is the Lock's own
// array, and argv appends to the Lock's buffer: a release allocates neither.
type releaseArgs struct {
	key    *[1]string              // KEYS[1]: the lock key, encoded
	window legacyproto.OwnerWindow // ARGV[1] to ARGV[6]: the owner window
}

func (a releaseArgs) keys() []string       { return a.key[:] }
func (a releaseArgs) argv(dst []any) []any { return a.window.Append(dst) }

// refreshArgs are refresh.lua's KEYS and ARGV: release.lua's, and the new
// value with its safety TTL.
type refreshArgs struct {
	key    *[1]string              // KEYS[1]: the lock key, encoded
	window legacyproto.OwnerWindow // ARGV[1] to ARGV[6]: the owner window
	value  string                  // ARGV[7]: the new expiry in the value codec's bytes
	safety any                     // ARGV[8]: the safety TTL in milliseconds, "0" for none
}

func (a refreshArgs) keys() []string { return a.key[:] }
func (a refreshArgs) argv(dst []any) []any {
	return append(a.window.Append(dst), a.value, a.safety)
}

// Replies of acquire.lua (legacy_state's states).
const (
	stateFree    = 1  // acquired: the key was absent
	stateExpired = 2  // acquired: an expired value was taken over
	stateLive    = 0  // held by someone else
	stateForeign = -1 // a value that does not decode
)

// Replies of release.lua and refresh.lua (legacy_owner's codes).
const (
	ownerOurs    = 1
	ownerTaken   = 0
	ownerGone    = -1
	ownerExpired = -2 // W passed by the caller's clock
	ownerLate    = -3 // the server's clock past W + the margin
)
