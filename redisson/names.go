package redisson

import (
	"strings"

	"github.com/lockbridge/lockbridge/driver/keyslot"
)

// The prefixes of the names Redisson derives from a lock name.
const (
	// channelPrefix names the channel unlocks publish on:
	// "redisson_lock__channel:{name}" (two underscores).
	channelPrefix = "redisson_lock__channel"
	// latchPrefix names the unlock latches:
	// "redisson_unlock_latch:{name}:<request id>".
	latchPrefix = "redisson_unlock_latch"
	// queuePrefix and timeoutPrefix name a fair lock's waiters' queue and
	// their timeouts: "redisson_lock_queue:{name}",
	// "redisson_lock_timeout:{name}".
	queuePrefix   = "redisson_lock_queue"
	timeoutPrefix = "redisson_lock_timeout"
	// tokenPrefix names a fenced lock's token counter:
	// "redisson_lock_token:{name}".
	tokenPrefix = "redisson_lock_token"
	// unlockMessage is what an unlock publishes: Redisson's
	// LockPubSub.UNLOCK_MESSAGE, which wakes one waiter of each client.
	unlockMessage = "0"
)

// prefixName is Redisson's RedissonObject.prefixName: prefix:{name}, or
// prefix:name when the name already holds a '{'.
func prefixName(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// channelName returns the channel Redisson's unlocks of lock name publish
// on, and its waiters listen to.
func channelName(name string) string { return prefixName(channelPrefix, name) }

// latchName returns the unlock latch of one unlock request of lock name.
func latchName(name, requestID string) string {
	return prefixName(latchPrefix, name) + ":" + requestID
}

// waiterChannel returns the channel a fair lock's unlock wakes the waiter
// with field on: "redisson_lock__channel:{name}:<field>".
func waiterChannel(name, field string) string { return channelName(name) + ":" + field }

// names are the Redis names of one lock.
type names struct {
	key, channel, latch string // latch: the prefix, ":<request id>" follows
	queue, timeouts     string // a fair lock's
	token               string // a fenced lock's counter
}

func newNames(key string) names {
	return names{key: key, channel: channelName(key), latch: prefixName(latchPrefix, key),
		queue: prefixName(queuePrefix, key), timeouts: prefixName(timeoutPrefix, key), token: prefixName(tokenPrefix, key)}
}

// oneSlot reports whether the lock's key, channel and latches hash to one
// cluster slot, as a script's keys must in Redis Cluster. It fails only for
// names with odd braces ("{}x", "a}{b"), which Redisson cannot run in a
// cluster either.
func (n *names) oneSlot() bool {
	s := keyslot.Of(n.key)
	for _, k := range []string{n.channel, n.latch + ":x", n.queue, n.timeouts, n.token} {
		if keyslot.Of(k) != s {
			return false
		}
	}
	return true
}
