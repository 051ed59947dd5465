package doctor

import (
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/stretchr/testify/assert"
)

// A namespace not started yet is a warning with the command that starts
// it; one that shows it ran and lost its phase stays a danger.
func TestNamespaceFindingUninitialised(t *testing.T) {
	t.Parallel()
	now := time.Now()
	uninit := func() *migrate.PhaseUnknownError {
		return &migrate.PhaseUnknownError{Namespace: "shop", Reason: migrate.ReasonUninitialized, Remedy: "init or repair"}
	}
	f := namespaceFinding(control.Status{Namespace: "shop", PhaseProblem: uninit()}, now)
	assert.Equal(t, Warn, f.Severity)
	assert.Contains(t, f.Summary, `namespace "shop" not initialised`)
	assert.Equal(t, "lockbridge phase init --namespace shop", f.Fix)

	for name, st := range map[string]control.Status{
		"evidence": {Namespace: "shop", PhaseProblem: uninit(), Evidence: migrate.PhaseDualWrite},
		"registry": {Namespace: "shop", PhaseProblem: uninit(), Members: []control.Member{{ID: "a"}}},
		"sighting": {Namespace: "shop", PhaseProblem: uninit(), Sighting: control.Sighting{At: now, Count: 1}},
		"phase lost": {Namespace: "shop", PhaseProblem: &migrate.PhaseUnknownError{Namespace: "shop",
			Reason: migrate.ReasonLost}},
	} {
		f := namespaceFinding(st, now)
		assert.Equal(t, Danger, f.Severity, name)
	}
}
