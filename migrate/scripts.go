package migrate

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/luafrag"
)

var (
	//go:embed phase_set.lua
	phaseSetSrc    string
	phaseSetScript = luafrag.Script("migrate/phase_set.lua", phaseSetSrc, "args.lua", "server_time.lua")

	//go:embed sighting.lua
	sightingSrc    string
	sightingScript = luafrag.Script("migrate/sighting.lua", sightingSrc, "args.lua", "server_time.lua")

	//go:embed heartbeat.lua
	heartbeatSrc    string
	heartbeatScript = luafrag.Script("migrate/heartbeat.lua", heartbeatSrc, "args.lua", "server_time.lua")

	//go:embed forget.lua
	forgetSrc    string
	forgetScript = luafrag.Script("migrate/forget.lua", forgetSrc, "args.lua", "server_time.lua")

	//go:embed prune.lua
	pruneSrc    string
	pruneScript = luafrag.Script("migrate/prune.lua", pruneSrc, "args.lua", "server_time.lua")

	//go:embed status.lua
	statusSrc    string
	statusScript = luafrag.Script("migrate/status.lua", statusSrc, "server_time.lua")
)

func publishCommand(c driver.Client) string {
	if c.Cluster() {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

var (
	//go:embed acquire.lua
	acquireSrc    string
	acquireScript = luafrag.Script("migrate/acquire.lua", acquireSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_expired.lua", "modern_fence.lua", "modern_acquire.lua")

	//go:embed release.lua
	releaseSrc    string
	releaseScript = luafrag.Script("migrate/release.lua", releaseSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua", "legacy_owner.lua", "modern_release.lua")

	//go:embed refresh.lua
	refreshSrc    string
	refreshScript = luafrag.Script("migrate/refresh.lua", refreshSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua", "legacy_owner.lua", "modern_refresh.lua")
)
