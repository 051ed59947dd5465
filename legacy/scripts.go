package legacy

import (
	_ "embed"

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

// The scripts of ModeAtomic. Each is built once; a *driver.Script is
// immutable.
var (
	acquireScript = luafrag.Script("legacy/scripts/acquire.lua", acquireSrc, fragArgs, fragDecode, fragLegacyArgs, fragExpired)
	releaseScript = luafrag.Script("legacy/scripts/release.lua", releaseSrc, fragArgs, fragDecode, fragLegacyArgs, fragNow, fragOwner)
	refreshScript = luafrag.Script("legacy/scripts/refresh.lua", refreshSrc, fragArgs, fragDecode, fragLegacyArgs, fragNow, fragOwner)
)

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
