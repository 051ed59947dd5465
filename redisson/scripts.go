package redisson

import (
	_ "embed"
	"strings"

	"github.com/lockbridge/lockbridge/driver"
)

// The scripts are Redisson's own, byte for byte: each file holds the text
// Redisson (3.24 and later, 4.x) sends, so a script cached by one side
// (Redisson sends EVALSHA by default since 3.46) is the other's too. The
// files end with a newline for editors; the scripts sent do not.
//
//   - acquire.lua (RedissonLock.tryLockInnerAsync): KEYS[1] the lock name;
//     ARGV[1] the lease in ms, ARGV[2] the field "<client id>:<owner id>".
//     When the key is absent or has the field: HINCRBY field 1, PEXPIRE
//     lease, reply nil (acquired). Otherwise reply the key's PTTL.
//   - release.lua (RedissonLock.unlockInnerAsync): KEYS[1] the lock name,
//     KEYS[2] its channel, KEYS[3] the unlock latch
//     "redisson_unlock_latch:{name}:<request id>"; ARGV[1] the message "0",
//     ARGV[2] the lease in ms, ARGV[3] the field, ARGV[4] PUBLISH or
//     SPUBLISH, ARGV[5] the latch's life in ms. A latch that exists is the
//     reply of an earlier run of the same request (0 or 1). Without our
//     field: nil. Otherwise HINCRBY field −1: above 0, PEXPIRE lease and
//     reply 0 (still held by the owner); at 0, DEL the key, publish "0" on
//     the channel and reply 1. Either reply is also written to the latch.
//   - renew.lua (Redisson's watchdog, renewal.LockTask, batched over keys):
//     KEYS the lock names; ARGV[1] the lease in ms, ARGV[i+1] the field for
//     KEYS[i]. Per key: when the field exists, PEXPIRE lease and 1, else 0.
//   - force_unlock.lua (RedissonLock.forceUnlockAsync): KEYS[1] the lock
//     name, KEYS[2] its channel; ARGV[1] "0", ARGV[2] the publish command.
//     DEL the key; when it existed, publish and reply 1, else 0.
var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/renew.lua
	renewSrc string
	//go:embed scripts/force_unlock.lua
	forceUnlockSrc string

	acquireScript     = script("redisson/scripts/acquire.lua", acquireSrc)
	releaseScript     = script("redisson/scripts/release.lua", releaseSrc)
	renewScript       = script("redisson/scripts/renew.lua", renewSrc)
	forceUnlockScript = script("redisson/scripts/force_unlock.lua", forceUnlockSrc)
)

func script(name, src string) *driver.Script {
	return driver.NewScript(name, strings.TrimSuffix(src, "\n"))
}

// Scripts returns the scripts this package runs, for inspection (the
// golden vectors pin their SHA1s) and for ACL planning.
func Scripts() []*driver.Script {
	return []*driver.Script{acquireScript, releaseScript, renewScript, forceUnlockScript}
}
