// Package migrate moves a mixed fleet — Java services on the legacy
// SETNX + GETSET lock, Go services — to the modern SET NX PX lock without a
// flag day and without ever letting two holders in.
//
// A Locker takes locks by the name the Java fleet uses, in one of four
// phases:
//
//	phase       writes                      must find free to acquire
//	legacy      legacy key                  legacy key
//	dual-write  legacy and modern, at once  legacy and modern
//	dual-read   modern key                  legacy and modern
//	modern      modern key                  modern key
//
// The legacy key is the name as the legacy profile encodes it (WithLegacy:
// raw bytes or JDK-serialized, the Java services' exact value bytes); the
// modern key is derived from it in the same hash slot (DeriveModernKey), so
// one script touches both in Redis Cluster. PhaseLegacy is legacy.Locker,
// PhaseModern is modern.Locker on the modern key, and the two dual phases
// run this package's scripts over both keys. A lock is released and
// refreshed under the rules of the phase it was taken in.
//
// Every lock's Done closes at the end of its local lease minus a twelfth
// of the lease (the lease counted from the send of the acquire or of the
// last confirmed refresh; in dual-write no later than the legacy expiry by
// our clock), with or without auto-refresh (WithModern(modern.WithAutoRefresh())),
// by a timer nothing in flight can delay; Err then wraps lockbridge.ErrLost
// and says the lease ran out. A refresh to a shorter ttl shortens the lease
// when it is sent. A release or refresh whose reply never came is never
// sent again: Unlock returns an error wrapping lockbridge.ErrUnknownOutcome
// and the lock ends as lost; Refresh returns one too, and the lease runs on
// to its timer (dual-write's lock ends: the legacy value it may have
// rewritten is not unique). A lock that ended otherwise than by a
// release stays in the heartbeats' report until its local lease end.
//
// Lockers in the same or neighbouring phases exclude each other, and so do
// dual-write and modern (Compatible). The unsafe pairs are a legacy-phase
// locker — every Java service is one — beside dual-read or modern: those
// write nothing a legacy locker reads. Hence the rules the Controller
// enforces: move one step at a time, only once every live client runs the
// current phase, and past dual-write only when no legacy-only locker has
// been seen for a quiet period.
//
// The phase comes from WithPhase (fixed) or WithPhaseFrom (a namespace's
// phase key in Redis, followed on a change notice and at an interval, one
// phase at a time). A namespace starts at legacy only through Controller.Init
// (`lockbridge phase init`); a locker that cannot trust a phase — never
// initialised, lost, unreadable, gone back, or not read within its phase
// lease (WithPhaseLease) — refuses with ErrPhaseUnknown rather than guess.
// Lockers heartbeat into the namespace's fleet registry, with the phases of
// the locks they hold, and record legacy sightings — a live legacy lock with
// no modern key, the evidence that a legacy-only locker still runs. Every
// time the Controller judges is the server's clock. It reads them to move
// the fleet: Status, Advance, Rollback, Init, Repair, Forget, and Cleanup,
// which removes that evidence once the fleet has run modern for the quiet
// period.
//
// The migration ends at PhaseModern, every lock on its derived modern key:
// a plain modern.Locker on the key Locker.Keys names takes the same lock,
// so a new service may join the ended migration that way
// (docs/migration.md, The end state).
//
// docs/migration.md is the runbook; docs/protocol.md lists every key and
// script.
package migrate
