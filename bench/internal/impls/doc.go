// Package impls puts every lock implementation the benchmarks compare behind
// one small interface: the go-redis floor, lockbridge's lockers, the replay of
// the Java seed sequence, bsm/redislock and redsync. Each is built on its own
// go-redis client, configured identically.
package impls
