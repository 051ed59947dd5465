//go:build race

package modern_test

// raceAllocs is what a race-detector build adds to an allocation bound:
// there sync.Pool drops some of what is put back at random.
const raceAllocs = 2
