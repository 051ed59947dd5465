package soak_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/soak"
	"github.com/stretchr/testify/assert"
)

// TestSoak runs the mixed fleet under faults: 40 s by default (make test),
// LOCKBRIDGE_SOAK=10m for the long form (make soak); LOCKBRIDGE_SOAK_SEED
// picks the seed. It fails on any overlap caused by Go code and on
// goroutines left after Close, and logs the figures table.
func TestSoak(t *testing.T) {
	cfg := soak.Config{Logf: t.Logf}
	if s := os.Getenv("LOCKBRIDGE_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("LOCKBRIDGE_SOAK=%q: %v", s, err)
		}
		cfg.Duration = d
	}
	if s := os.Getenv("LOCKBRIDGE_SOAK_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("LOCKBRIDGE_SOAK_SEED=%q: %v", s, err)
		}
		cfg.Seed = n
	}
	f := soak.Run(t, cfg)
	t.Logf("\n%s", f.Table())
	shown := 0
	for _, o := range f.Overlaps {
		if o.Category == soak.GoCaused && shown < 20 {
			shown++
			t.Errorf("overlap (a) on %s (%s): %s\n    %s", o.Key, o.Group, o.Cause, o.Trace)
		}
	}
	assert.Zero(t, f.Count(soak.GoCaused), "overlaps caused by Go code")
	if !assert.LessOrEqual(t, f.GoroutinesAfter, f.GoroutinesBefore, "goroutines left after Close") {
		t.Logf("%s", f.LeakedStacks)
	}
	for _, g := range f.Groups {
		assert.Positive(t, g.Acquisitions, "group %s acquired nothing", g.Name)
	}
}
