// Package migrateproto is the migration's protocol, what both sides of
// package migrate speak: the application's Locker (package migrate) and the
// operator's controller (package migrate/control). It holds the Redis names
// of a namespace, the scripts (scripts/*.lua, which the Java library loads
// too), the registry entry's exact format and its parsing, and the
// decoding both sides share. docs/protocol.md specifies the keys, the
// entry and the scripts.
package migrateproto
