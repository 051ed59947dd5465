// Package fleetsim simulates a mixed fleet migrating from the legacy lock to
// the modern one, live, on one Redis: the CLI's demo and the root end-to-end
// test (compat_rolling_test.go) both run it.
//
// The fleet is workers of two kinds contending for a handful of lock names:
//
//   - Java workers run the Java seed algorithm (SETNX + GET + GETSET, polling
//     every 100 ms, DEL on release), replayed command for command by
//     internal/testing/javareplay. They are legacy lockers and never change.
//   - Go workers each run a migrate.Locker in a fixed phase
//     (migrate.WithPhase + migrate.WithNamespace), so they heartbeat into the
//     namespace's fleet registry and record legacy sightings, as a deployed
//     service with a configured phase does.
//
// A deployer rolls the fleet with a control.Controller, as an operator
// would: Advance (refused until safe), then redeploy the Go workers one at a
// time in the new phase (the worker closes its Locker and starts a new one,
// a rolling deploy) while everyone keeps contending. After every Go worker
// runs dual-write the Java workers are retired, the deployer waits out the
// quiet period until the controller allows dual-read, and goes on to
// modern; optionally it rolls back one step to show rollback. It tries an
// early step on purpose and records the controller's refusal.
//
// Inside each critical section a per-lock-name holder count is entered after
// the acquire and left before the release: a second holder inside is an
// overlap, the one thing the migration must never allow. Everything is
// counted per worker kind and per phase, streamed as events and snapshots,
// and summed up at the end.
package fleetsim
