package locktest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The guard must see an overlap when there is one: otherwise every
// exclusion test built on it proves nothing.
func TestGuardSeesOverlaps(t *testing.T) {
	Run(t, Single(t), func(t *testing.T, tg Target) {
		g := NewGuard(tg.Client, Key(t, "g"))
		g.Hold(t, time.Millisecond)
		g.Hold(t, time.Millisecond)
		assert.Equal(t, int64(0), g.Violations(), "sequential holders never overlap")

		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); g.Hold(t, 50*time.Millisecond) }()
		}
		wg.Wait()
		assert.Equal(t, int64(6), g.Entries())
		assert.Greater(t, g.Violations(), int64(0), "unguarded concurrent holders overlap")
	})
}
