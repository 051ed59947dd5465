package migrate

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/driver"
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
