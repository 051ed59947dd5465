package modern

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/internal/luafrag"
)

// The scripts: each body file says its KEYS, ARGV and replies; the functions
// they call are fragments in internal/luafrag (modern_*.lua), which migrate's
// scripts reuse. docs/protocol.md describes them for other languages.
var (
	//go:embed acquire.lua
	acquireBody string
	//go:embed release.lua
	releaseBody string
	//go:embed refresh.lua
	refreshBody string
	//go:embed ttl.lua
	ttlBody string

	acquireScript = luafrag.Script("modern/acquire.lua", acquireBody, "modern_fence.lua", "modern_acquire.lua")
	releaseScript = luafrag.Script("modern/release.lua", releaseBody, "modern_release.lua")
	refreshScript = luafrag.Script("modern/refresh.lua", refreshBody, "modern_refresh.lua")
	ttlScript     = luafrag.Script("modern/ttl.lua", ttlBody, "modern_pttl.lua")
)

// Script result codes shared by release, refresh and ttl (and the first
// element of acquire's reply).
const (
	codeOurs   = 1  // ours: done (acquired, released, refreshed)
	codeTaken  = 0  // another holder's value
	codeAbsent = -1 // no key: expired (or never set)
)
