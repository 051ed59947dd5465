package migrate

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/luafrag"
)

var (
	//go:embed scripts/phase_set.lua
	phaseSetSrc    string
	phaseSetScript = luafrag.Script("migrate/scripts/phase_set.lua", phaseSetSrc, "args.lua", "server_time.lua")

	//go:embed scripts/sighting.lua
	sightingSrc    string
	sightingScript = luafrag.Script("migrate/scripts/sighting.lua", sightingSrc, "args.lua", "server_time.lua")

	//go:embed scripts/heartbeat.lua
	heartbeatSrc    string
	heartbeatScript = luafrag.Script("migrate/scripts/heartbeat.lua", heartbeatSrc, "args.lua", "server_time.lua")

	//go:embed scripts/forget.lua
	forgetSrc    string
	forgetScript = luafrag.Script("migrate/scripts/forget.lua", forgetSrc, "args.lua", "server_time.lua")

	//go:embed scripts/prune.lua
	pruneSrc    string
	pruneScript = luafrag.Script("migrate/scripts/prune.lua", pruneSrc, "args.lua", "server_time.lua")

	//go:embed scripts/cleanup.lua
	cleanupSrc    string
	cleanupScript = luafrag.Script("migrate/scripts/cleanup.lua", cleanupSrc, "args.lua", "server_time.lua")

	//go:embed scripts/registry_read.lua
	registryReadSrc    string
	registryReadScript = luafrag.Script("migrate/scripts/registry_read.lua", registryReadSrc, "args.lua")

	//go:embed scripts/status.lua
	statusSrc    string
	statusScript = luafrag.Script("migrate/scripts/status.lua", statusSrc, "server_time.lua")
)

func publishCommand(c driver.Client) string {
	if c.Cluster() {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

var (
	//go:embed scripts/acquire.lua
	acquireSrc    string
	acquireScript = luafrag.Script("migrate/scripts/acquire.lua", acquireSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_expired.lua", "modern_fence.lua", "modern_acquire.lua")

	//go:embed scripts/release.lua
	releaseSrc    string
	releaseScript = luafrag.Script("migrate/scripts/release.lua", releaseSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua", "legacy_owner.lua", "modern_release.lua")

	//go:embed scripts/refresh.lua
	refreshSrc    string
	refreshScript = luafrag.Script("migrate/scripts/refresh.lua", refreshSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua", "legacy_owner.lua", "modern_refresh.lua")
)
