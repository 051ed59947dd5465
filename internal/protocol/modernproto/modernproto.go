package modernproto

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/luafrag"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
)

// FenceSuffix is what the fence counter's name adds to the lock key (inside
// the hash-tag form: "{key}:fence" for an untagged key).
const FenceSuffix = ":fence"

// TokenBytes is how many random bytes NewToken draws.
const TokenBytes = 16

// MaxTokenLen is the longest token a lock accepts.
const MaxTokenLen = 1024

// NewToken returns a fresh lock token: 16 bytes from crypto/rand, encoded as
// unpadded base64url (22 printable characters). Its error is crypto/rand's,
// unwrapped: callers prefix it with their package.
func NewToken() (string, error) {
	var b [TokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// The scripts. The body files (acquire.lua, release.lua, refresh.lua,
// ttl.lua, here) say their KEYS, ARGV and replies; the functions they call
// are fragments in internal/protocol/luafrag (modern_*.lua), which migrate's scripts
// reuse. The names ("modern/acquire.lua", …) are the protocol's, shown in
// errors; the assembled sources, and so their SHA1s, are pinned by the
// package's tests.
var (
	//go:embed acquire.lua
	acquireBody string
	//go:embed release.lua
	releaseBody string
	//go:embed refresh.lua
	refreshBody string
	//go:embed ttl.lua
	ttlBody string

	AcquireScript = luafrag.Script("modern/acquire.lua", acquireBody, "args.lua", "modern_token.lua",
		"modern_fence.lua", "modern_acquire.lua")
	ReleaseScript = luafrag.Script("modern/release.lua", releaseBody, "args.lua", "modern_token.lua", "modern_release.lua")
	RefreshScript = luafrag.Script("modern/refresh.lua", refreshBody, "args.lua", "modern_token.lua", "modern_refresh.lua")
	TTLScript     = luafrag.Script("modern/ttl.lua", ttlBody, "args.lua", "modern_token.lua", "modern_pttl.lua")
)

// Script result codes shared by release, refresh and ttl (and the first
// element of acquire's and ttl's replies).
const (
	Ours   = 1  // ours: done (acquired, released, refreshed)
	Taken  = 0  // another holder's value
	Absent = -1 // no key: expired (or never set)
)

// Names are the Redis names of one lock, and the KEYS of its scripts.
type Names struct {
	Key     string
	Fence   string // the fence counter; "" without fencing
	Channel string // the release channel; "" when the key has none

	acquire []string  // KEYS of acquire.lua: key[, fence]
	release []string  // KEYS of release.lua: key[, channel]
	keys    [4]string // the array of acquire and release, after Bind
}

// NewNames returns the names of the lock on key: its release channel (none
// for the few keys whose channel cannot share their hash slot) and, with
// fencing, its fence counter. ok is false when fencing is asked for and the
// counter cannot share the key's slot (a key with a stray '}').
func NewNames(key string, fencing bool) (n Names, ok bool) {
	if n, ok = UnboundNames(key, fencing); ok {
		n.setKeys()
	}
	return n, ok
}

// UnboundNames is NewNames without the KEYS of the scripts: call Bind on
// the Names where it stays (a lock's field) before running a script with
// it. The KEYS then live in the Names, in no allocation of their own.
func UnboundNames(key string, fencing bool) (n Names, ok bool) {
	n.Key = key
	if ch, ok := notify.Channel(key); ok {
		n.Channel = ch
	}
	if fencing {
		f, ok := keyslot.Companion(key, FenceSuffix)
		if !ok {
			return Names{}, false
		}
		n.Fence = f
	}
	return n, true
}

// Bind sets the KEYS of the scripts in n's own array. A copy of n made
// after keeps using that array, which is never written again.
func (n *Names) Bind() {
	n.keys = [4]string{n.Key, n.Fence, n.Key, n.Channel}
	n.slice(n.keys[:])
}

// setKeys builds the KEYS slices, on one backing array.
func (n *Names) setKeys() {
	b := [4]string{n.Key, n.Fence, n.Key, n.Channel}
	n.slice(b[:])
}

// slice points the KEYS slices into all, four names: key, fence, key, channel.
func (n *Names) slice(all []string) {
	n.acquire, n.release = all[0:1:2], all[2:3:4]
	if n.Fence != "" {
		n.acquire = all[0:2:2]
	}
	if n.Channel != "" {
		n.release = all[2:4:4]
	}
}

// Node is one Redis node spoken to in the modern protocol.
type Node struct {
	c       driver.Client
	pkg     string // prefix of error messages: "modern", "redlock"
	publish any    // "PUBLISH" or "SPUBLISH", boxed once
	// scripted is set once the acquire script ran on the server: the
	// user may run scripts, so a lock taken with a plain SET NX PX can be
	// released (by a script) too. Until then acquires run the script, which
	// a user without script rights is refused before anything is written.
	scripted *atomic.Bool
}

// NewNode returns the node behind c; pkg prefixes its errors. c must not be
// nil.
func NewNode(pkg string, c driver.Client) Node {
	return Node{c: c, pkg: pkg, publish: notify.PublishCommand(c), scripted: new(atomic.Bool)}
}

// Client returns the node's client.
func (nd *Node) Client() driver.Client { return nd.c }

// Acquire makes one attempt to SET n.Key token NX PX ttl (and, when n has
// a fence counter, to advance it with the same script: see FenceError).
// acquired: v is the fence (0 without fencing). Not acquired: v is the
// holder's PTTL in ms (-1: no expiry; 0: the key was gone by the time it
// was read, so the holder's lease ended this very moment). err is a Redis
// error (wrapped, never "not acquired"): a *FenceError when the fence
// counter is unusable, a *WrongTypeError when n.Key holds another type than
// string — in both cases nothing was written —, or a reply of the wrong
// shape.
//
// Without fencing the attempt is the plain command SET n.Key token NX PX
// ttl: one command on the server, the least a lock can do — once a first
// acquire through the script showed that the user may run scripts (and so
// release what it takes). Only when it
// finds the key taken does a second round trip run the read-only ttl script,
// for the holder's PTTL and to tell a key of another type (which SET NX
// leaves alone without an error) from a holder's token. An attempt that
// expects the key held uses AcquireScripted: one round trip either way.
func (nd *Node) Acquire(ctx context.Context, n *Names, token any, ttl time.Duration) (acquired bool, v int64,
	err error) {
	if n.Fence != "" || !nd.scripted.Load() {
		return nd.AcquireScripted(ctx, n, token, ttl)
	}
	tok, _ := token.(string)
	set, err := nd.c.SetNXPX(ctx, n.Key, tok, ttl)
	if err != nil {
		return false, 0, nd.wrap("acquire", n, err)
	}
	if set {
		return true, 0, nil
	}
	a := ttlArgs{names: n, token: token}
	r, err := nd.c.Eval(ctx, TTLScript, a.keys(), a.argv()...)
	if err != nil {
		return false, 0, nd.wrap("acquire", n, err)
	}
	code, v, ok := pair(r)
	switch {
	case ok && code == Taken:
		return false, v, nil
	case ok && code == Absent:
		return false, 0, nil // released or expired since the SET
	}
	// Ours cannot be: the token is fresh and its SET was refused.
	return false, 0, nd.unexpected("acquire", r)
}

// AcquireScripted is Acquire through the acquire script, with or without
// fencing: one round trip whether the key is free or held, where Acquire's
// plain SET NX needs a second one, the ttl script, when the key is held. It
// is for an attempt that expects to find the key held (a waiter's, on a key
// it has waited for); its results are Acquire's.
func (nd *Node) AcquireScripted(ctx context.Context, n *Names, token any, ttl time.Duration) (acquired bool, v int64,
	err error) {
	a := acquireArgs{names: n, token: token, ttl: ttl}
	r, err := nd.c.Eval(ctx, AcquireScript, a.keys(), a.argv()...)
	if driver.Permitted(err) {
		nd.scripted.Store(true)
	}
	if err != nil {
		return false, 0, nd.wrap("acquire", n, err)
	}
	code, v, ok := pair(r)
	if !ok || (code != Ours && code != Taken) {
		return false, 0, nd.unexpected("acquire", r)
	}
	return code == Ours, v, nil
}

// AcquireWait is Acquire followed, on the same connection, by WAIT replicas
// timeout: acked is how many replicas acknowledged the acquire's writes
// (only meaningful when acquired). The client must implement driver.Waiter
// with a connection it can pin; else the error wraps driver.ErrNoPin and
// nothing was sent.
func (nd *Node) AcquireWait(ctx context.Context, n *Names, token any, ttl time.Duration, replicas int,
	timeout time.Duration) (acquired bool, v, acked int64, err error) {
	w, ok := nd.c.(driver.Waiter)
	if !ok {
		return false, 0, 0, fmt.Errorf("%s: acquire %q: %w", nd.pkg, n.Key, driver.ErrNoPin)
	}
	a := acquireArgs{names: n, token: token, ttl: ttl}
	r, acked, err := w.EvalWait(ctx, AcquireScript, a.keys(), replicas, timeout, a.argv()...)
	if err != nil && r == nil {
		if errors.Is(err, driver.ErrNoPin) {
			return false, 0, 0, fmt.Errorf("%s: acquire %q: %w", nd.pkg, n.Key, err)
		}
		return false, 0, 0, nd.wrap("acquire", n, err)
	}
	code, v, ok := pair(r)
	if !ok || (code != Ours && code != Taken) {
		return false, 0, 0, nd.unexpected("acquire", r)
	}
	if err != nil {
		// The script ran; WAIT failed: acquired with no acknowledgement known.
		return code == Ours, v, 0, fmt.Errorf("%s: acquire %q: %w", nd.pkg, n.Key, err)
	}
	return code == Ours, v, acked, nil
}

// Release runs the release script: Ours (deleted, and published on the
// release channel), Taken or Absent.
func (nd *Node) Release(ctx context.Context, n *Names, token any) (int64, error) {
	a := releaseArgs{names: n, token: token, publish: nd.publish}
	r, err := nd.c.Eval(ctx, ReleaseScript, a.keys(), a.argv()...)
	if err != nil {
		return 0, nd.wrap("unlock", n, err)
	}
	return nd.code("unlock", r)
}

// Refresh runs the refresh script (PEXPIRE ttl if ours): Ours, Taken or
// Absent.
func (nd *Node) Refresh(ctx context.Context, n *Names, token any, ttl time.Duration) (int64, error) {
	a := refreshArgs{names: n, token: token, ttl: ttl}
	r, err := nd.c.Eval(ctx, RefreshScript, a.keys(), a.argv()...)
	if err != nil {
		return 0, nd.wrap("refresh", n, err)
	}
	return nd.code("refresh", r)
}

// RefreshWait is Refresh followed, on the same connection, by WAIT replicas
// timeout: acked is how many replicas acknowledged the refresh's PEXPIRE
// (only meaningful when the code is Ours). When the script ran and WAIT
// failed, the code comes with WAIT's error and acked 0. The client must
// implement driver.Waiter with a connection it can pin; else the error wraps
// driver.ErrNoPin and nothing was sent.
func (nd *Node) RefreshWait(ctx context.Context, n *Names, token any, ttl time.Duration, replicas int,
	timeout time.Duration) (code, acked int64, err error) {
	w, ok := nd.c.(driver.Waiter)
	if !ok {
		return 0, 0, fmt.Errorf("%s: refresh %q: %w", nd.pkg, n.Key, driver.ErrNoPin)
	}
	a := refreshArgs{names: n, token: token, ttl: ttl}
	r, acked, err := w.EvalWait(ctx, RefreshScript, a.keys(), replicas, timeout, a.argv()...)
	if err != nil && r == nil {
		if errors.Is(err, driver.ErrNoPin) {
			return 0, 0, fmt.Errorf("%s: refresh %q: %w", nd.pkg, n.Key, err)
		}
		return 0, 0, nd.wrap("refresh", n, err)
	}
	code, cerr := nd.code("refresh", r)
	if cerr != nil {
		return 0, 0, cerr
	}
	if err != nil {
		// The script ran; WAIT failed: no acknowledgement known.
		return code, 0, fmt.Errorf("%s: refresh %q: %w", nd.pkg, n.Key, err)
	}
	return code, acked, nil
}

// PTTL runs the ttl script: the code (Ours, Taken or Absent) and the key's
// PTTL in ms.
func (nd *Node) PTTL(ctx context.Context, n *Names, token any) (code, ms int64, err error) {
	a := ttlArgs{names: n, token: token}
	r, err := nd.c.Eval(ctx, TTLScript, a.keys(), a.argv()...)
	if err != nil {
		return 0, 0, nd.wrap("ttl", n, err)
	}
	code, v, ok := pair(r)
	if !ok || code < Absent || code > Ours {
		return 0, 0, nd.unexpected("ttl", r)
	}
	return code, v, nil
}

// wrap wraps an error of a script on n: a FENCE reply as a *FenceError, a
// WRONGTYPE reply as a *WrongTypeError, anything else with the operation and
// the key.
func (nd *Node) wrap(op string, n *Names, err error) error {
	switch {
	case driver.HasPrefix(err, FenceCode):
		return &FenceError{Pkg: nd.pkg, Key: n.Key, Counter: n.Fence, Err: err}
	case driver.HasPrefix(err, "WRONGTYPE"):
		return &WrongTypeError{Pkg: nd.pkg, Op: op, Key: n.Key, Err: err}
	}
	return fmt.Errorf("%s: %s %q: %w", nd.pkg, op, n.Key, err)
}

func (nd *Node) code(op string, r any) (int64, error) {
	n, ok := r.(int64)
	if !ok || n < Absent || n > Ours {
		return 0, nd.unexpected(op, r)
	}
	return n, nil
}

// unexpected reports a script reply of the wrong shape.
func (nd *Node) unexpected(op string, reply any) error {
	return fmt.Errorf("%s: %s: unexpected reply %#v", nd.pkg, op, reply)
}

// pair reads a {code, value} reply.
func pair(r any) (code, v int64, ok bool) {
	a, ok := r.([]any)
	if !ok || len(a) != 2 {
		return 0, 0, false
	}
	code, ok1 := a[0].(int64)
	v, ok2 := a[1].(int64)
	return code, v, ok1 && ok2
}
