// Package redigoadapter adapts github.com/gomodule/redigo to driver.Client. It takes
// a *redis.Pool or any other source of connections with GetContext.
//
// Commands go on the wire as the locks name them: SETNX and GETSET are sent
// literally. Every call honours its context (redigo's DoContext closes the
// connection when the context ends). A context that can never end
// (context.Background()) goes through Conn.Do on the caller's goroutine:
// redigo's DoContext runs every command on a goroutine of its own, which
// made the uncontended lock cycle about 1.5× slower than on go-redis; the
// read timeout of the pool's connections bounds such a call as before. redigo has no cluster client, so the
// adapter talks to one server and uses plain pub/sub.
package redigoadapter
