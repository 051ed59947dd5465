//go:build !race

package rueidisadapter_test

// raceAllocs is what a race-detector build adds to an allocation bound
// (none here).
const raceAllocs = 0
