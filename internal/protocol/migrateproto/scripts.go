package migrateproto

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/internal/protocol/luafrag"
)

// The scripts. The names ("migrate/scripts/acquire.lua", …) are the
// protocol's, as the Java library and the golden vectors name them; the
// body files are scripts/*.lua here, and each says its KEYS, ARGV and
// replies.
var (
	//go:embed scripts/phase_set.lua
	phaseSetSrc string
	//go:embed scripts/sighting.lua
	sightingSrc string
	//go:embed scripts/heartbeat.lua
	heartbeatSrc string
	//go:embed scripts/forget.lua
	forgetSrc string
	//go:embed scripts/prune.lua
	pruneSrc string
	//go:embed scripts/cleanup.lua
	cleanupSrc string
	//go:embed scripts/registry_read.lua
	registryReadSrc string
	//go:embed scripts/status.lua
	statusSrc string
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/refresh.lua
	refreshSrc string

	PhaseSetScript = luafrag.Script("migrate/scripts/phase_set.lua", phaseSetSrc, "args.lua", "server_time.lua",
		"server_replid.lua")
	SightingScript  = luafrag.Script("migrate/scripts/sighting.lua", sightingSrc, "args.lua", "server_time.lua")
	HeartbeatScript = luafrag.Script("migrate/scripts/heartbeat.lua", heartbeatSrc, "args.lua", "server_time.lua")
	ForgetScript    = luafrag.Script("migrate/scripts/forget.lua", forgetSrc, "args.lua", "server_time.lua")
	PruneScript     = luafrag.Script("migrate/scripts/prune.lua", pruneSrc, "args.lua", "server_time.lua")
	CleanupScript   = luafrag.Script("migrate/scripts/cleanup.lua", cleanupSrc, "args.lua", "server_time.lua",
		"server_replid.lua")
	RegistryReadScript = luafrag.Script("migrate/scripts/registry_read.lua", registryReadSrc, "args.lua")
	StatusScript       = luafrag.Script("migrate/scripts/status.lua", statusSrc, "server_time.lua", "server_replid.lua")

	AcquireScript = luafrag.Script("migrate/scripts/acquire.lua", acquireSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_expired.lua", "modern_fence.lua", "modern_acquire.lua")
	ReleaseScript = luafrag.Script("migrate/scripts/release.lua", releaseSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua", "legacy_owner.lua", "modern_release.lua")
	RefreshScript = luafrag.Script("migrate/scripts/refresh.lua", refreshSrc,
		"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua", "legacy_owner.lua", "modern_refresh.lua")
)
