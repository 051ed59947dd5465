// Package logtest captures log/slog records for tests that assert what a
// Locker logs.
package logtest
