//go:build race

package rueidisadapter_test

// raceAllocs is what a race-detector build adds to an allocation bound:
// there sync.Pool drops some of what is put back at random, and rueidis
// pools its commands and replies.
const raceAllocs = 9
