package redisson

import "time"

// The arguments of each script (scripts.go), one type per script: its
// fields are the KEYS and ARGV the script's header declares, and keys and
// argv return them in that order (TestScriptHeaders checks the two against
// each other). Durations are sent in whole milliseconds.

// Reply codes the scripts' headers name.
const (
	renewed   = 1 // renew.lua: the field is there; the lease is set
	renewGone = 0 // renew.lua: the field is gone; nothing written

	releaseKept      = 0  // release.lua, fair_release.lua: a hold is left
	releaseDone      = 1  // the last hold was released (fair: or the key was gone)
	releaseLatchGone = -1 // sent again, and the latch is gone: unknown, nothing done

	forceDeleted = 1 // force_unlock.lua, fair_force_unlock.lua: the key was deleted
	forceAbsent  = 0 // there was no key

	fairTryRefused = 1 // fair_try.lua: held by another owner, or others wait first

	fencedNone = -1 // fenced_acquire.lua: the half of the reply that does not apply
)

// flag is a script's '0' or '1' argument.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// acquireArgs are acquire.lua's.
type acquireArgs struct {
	key   string        // KEYS[1]: the lock name
	lease time.Duration // ARGV[1]
	field string        // ARGV[2]: the owner's field
}

func (a acquireArgs) keys() []string { return []string{a.key} }
func (a acquireArgs) argv() []any    { return []any{a.lease.Milliseconds(), a.field} }

// fencedAcquireArgs are fenced_acquire.lua's.
type fencedAcquireArgs struct {
	key     string        // KEYS[1]: the lock name
	counter string        // KEYS[2]: the token counter
	lease   time.Duration // ARGV[1]
	field   string        // ARGV[2]: the owner's field
}

func (a fencedAcquireArgs) keys() []string { return []string{a.key, a.counter} }
func (a fencedAcquireArgs) argv() []any    { return []any{a.lease.Milliseconds(), a.field} }

// renewArgs are renew.lua's.
type renewArgs struct {
	key   string        // KEYS[1]: the lock name
	lease time.Duration // ARGV[1]
	field string        // ARGV[2]: the owner's field
}

func (a renewArgs) keys() []string { return []string{a.key} }
func (a renewArgs) argv() []any    { return []any{a.lease.Milliseconds(), a.field} }

// releaseArgs are release.lua's.
type releaseArgs struct {
	key       string        // KEYS[1]: the lock name
	channel   string        // KEYS[2]: the lock's channel
	latch     string        // KEYS[3]: this request's unlock latch
	field     string        // ARGV[1]: the owner's field
	lease     time.Duration // ARGV[2]: the lease the lock keeps when a hold is left
	publish   string        // ARGV[3]: "PUBLISH" or "SPUBLISH"
	latchLife time.Duration // ARGV[4]
	again     bool          // ARGV[5]: the request was sent before
}

func (a releaseArgs) keys() []string { return []string{a.key, a.channel, a.latch} }
func (a releaseArgs) argv() []any {
	return []any{a.field, a.lease.Milliseconds(), a.publish, a.latchLife.Milliseconds(), flag(a.again)}
}

// forceUnlockArgs are force_unlock.lua's.
type forceUnlockArgs struct {
	key     string // KEYS[1]: the lock name
	channel string // KEYS[2]: the lock's channel
	publish string // ARGV[1]: "PUBLISH" or "SPUBLISH"
}

func (a forceUnlockArgs) keys() []string { return []string{a.key, a.channel} }
func (a forceUnlockArgs) argv() []any    { return []any{a.publish} }

// fairTryArgs are fair_try.lua's.
type fairTryArgs struct {
	key, queue, timeouts string        // KEYS[1] to KEYS[3]: the lock, its line and their timeouts
	lease                time.Duration // ARGV[1]
	field                string        // ARGV[2]: the owner's field
	now                  int64         // ARGV[3]: this client's clock in ms
	fairWait             time.Duration // ARGV[4]: the lock's fair wait
}

func (a fairTryArgs) keys() []string { return []string{a.key, a.queue, a.timeouts} }
func (a fairTryArgs) argv() []any {
	return []any{a.lease.Milliseconds(), a.field, a.now, a.fairWait.Milliseconds()}
}

// fairAcquireArgs are fair_acquire.lua's.
type fairAcquireArgs struct {
	key, queue, timeouts string        // KEYS[1] to KEYS[3]: the lock, its line and their timeouts
	lease                time.Duration // ARGV[1]
	field                string        // ARGV[2]: the owner's field
	wait                 time.Duration // ARGV[3]
	now                  int64         // ARGV[4]: this client's clock in ms
}

func (a fairAcquireArgs) keys() []string { return []string{a.key, a.queue, a.timeouts} }
func (a fairAcquireArgs) argv() []any {
	return []any{a.lease.Milliseconds(), a.field, a.wait.Milliseconds(), a.now}
}

// fairDequeueArgs are fair_dequeue.lua's.
type fairDequeueArgs struct {
	queue, timeouts string        // KEYS[1], KEYS[2]: the line and their timeouts
	field           string        // ARGV[1]: the leaving owner's field
	wait            time.Duration // ARGV[2]: its wait
}

func (a fairDequeueArgs) keys() []string { return []string{a.queue, a.timeouts} }
func (a fairDequeueArgs) argv() []any    { return []any{a.field, a.wait.Milliseconds()} }

// fairReleaseArgs are fair_release.lua's.
type fairReleaseArgs struct {
	key, queue, timeouts string        // KEYS[1] to KEYS[3]: the lock, its line and their timeouts
	channel              string        // KEYS[4]: the lock's channel
	latch                string        // KEYS[5]: this request's unlock latch
	field                string        // ARGV[1]: the owner's field
	lease                time.Duration // ARGV[2]: the lease the lock keeps when a hold is left
	now                  int64         // ARGV[3]: this client's clock in ms
	publish              string        // ARGV[4]: "PUBLISH" or "SPUBLISH"
	latchLife            time.Duration // ARGV[5]
	again                bool          // ARGV[6]: the request was sent before
}

func (a fairReleaseArgs) keys() []string {
	return []string{a.key, a.queue, a.timeouts, a.channel, a.latch}
}

func (a fairReleaseArgs) argv() []any {
	return []any{a.field, a.lease.Milliseconds(), a.now, a.publish, a.latchLife.Milliseconds(), flag(a.again)}
}

// fairForceUnlockArgs are fair_force_unlock.lua's.
type fairForceUnlockArgs struct {
	key, queue, timeouts string // KEYS[1] to KEYS[3]: the lock, its line and their timeouts
	channel              string // KEYS[4]: the lock's channel
	now                  int64  // ARGV[1]: this client's clock in ms
	publish              string // ARGV[2]: "PUBLISH" or "SPUBLISH"
}

func (a fairForceUnlockArgs) keys() []string { return []string{a.key, a.queue, a.timeouts, a.channel} }
func (a fairForceUnlockArgs) argv() []any    { return []any{a.now, a.publish} }
