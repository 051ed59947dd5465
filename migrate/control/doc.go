// Package control is the operator's side of the migration in package
// migrate: the Controller that moves a namespace's fleet through the phases
// one step at a time (Status, Advance, Rollback, Init, Repair, Forget,
// Cleanup), judging the fleet registry and the legacy sightings the
// migrate.Lockers write, by the server's clock. The CLI (cmd/lockbridge)
// runs it; a deploy pipeline may too. docs/migration.md is the runbook.
package control
