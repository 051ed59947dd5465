// Package interop holds the tests that run lockbridge beside the real Java
// lock libraries: a Java worker (the Maven project in interop/java, built
// once per test run) contends on a real redis-server with Spring Data Redis'
// RedisCallback lock and its template-operations twin (over Lettuce and
// Jedis, on a StringRedisTemplate and on a default JDK-serializing
// RedisTemplate), jedis-lock 1.0.0, Spring Integration's RedisLockRegistry
// and ShedLock, while Go lockers of the matching profile contend beside it;
// Redisson workers (interop/java/redisson, on the newest Redisson 4.x and the
// last 3.x) take Redisson's RLock beside package redisson, on a single server
// and on a 3-master cluster.
//
// The tests need a JDK (17 or later) and Maven on PATH; they fail, naming the
// install command, when either is missing. `make interop` runs them;
// `make interop-long` runs the long fairness and contention runs
// (LOCKBRIDGE_INTEROP_LONG=1). See docs/java.md and docs/redisson.md.
package interop
