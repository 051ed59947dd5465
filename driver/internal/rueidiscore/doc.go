// Package rueidiscore is the part of the adapters for github.com/redis/rueidis
// and its fork github.com/valkey-io/valkey-go (driver/rueidisadapter,
// driver/valkeyadapter) that does not depend on either library's types: it
// turns the driver's commands into the strings those clients send, finds the
// key that routes a command to its cluster node, normalises replies,
// implements adapter.Conn (plain, pinned and pub/sub connections) over the
// small Backend each adapter provides, and tells whether a client was built
// with a setting that resends commands.
//
// Each adapter lives in a Go module of its own, because both libraries need
// a newer Go than lockbridge's module; this package stays free of them.
package rueidiscore

//go:generate go run ./valkeygen
