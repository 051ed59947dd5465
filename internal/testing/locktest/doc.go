// Package locktest is what the lock packages' tests share: the clients to run
// every behaviour test on (go-redis and redigo on a real redis-server, go-redis
// on a real 3-master cluster), and the guard counter that checks exclusion.
package locktest
