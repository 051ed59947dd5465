// Package fleet runs a simulated fleet of real migrate.Lockers — each its
// own member of the namespace's registry, many sharing one go-redis client
// as in a process — against one redis-server or a 3-primary cluster, and
// measures what it costs the namespace's primary: CPU (INFO cpu) against a
// PING floor on the same schedule, the server time of every command
// (SLOWLOG), Controller.Status and Advance, the namespace's memory, and how
// long a step takes to reach the fleet. bench/cmd/fleetbench reports it.
package fleet
