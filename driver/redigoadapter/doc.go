// Package redigoadapter adapts github.com/gomodule/redigo to driver.Client. It takes
// a *redis.Pool or any other source of connections with GetContext.
//
// Commands go on the wire as the locks name them: SETNX and GETSET are sent
// literally. Every call honours its context (redigo's DoContext closes the
// connection when the context ends). redigo has no cluster client, so the
// adapter talks to one server and uses plain pub/sub.
package redigoadapter
