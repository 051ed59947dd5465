package migrate

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/luafrag"
)

var (
	//go:embed phase_set.lua
	phaseSetSrc    string
	phaseSetScript = driver.NewScript("migrate/phase_set.lua", phaseSetSrc)

	//go:embed sighting.lua
	sightingSrc    string
	sightingScript = driver.NewScript("migrate/sighting.lua", sightingSrc)
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
