package redlock

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
)

// ErrNodeTimeout is the error of a node that did not answer within the
// node timeout (WithNodeTimeout). It stands in for the driver's
// context.DeadlineExceeded, so that errors.Is(err, context.DeadlineExceeded)
// holds for a redlock error only when the caller's own context ran out.
var ErrNodeTimeout = errors.New("redlock: node timed out")

// Status is what one node answered in a round (acquire, refresh or unlock).
type Status int

const (
	// OK: the node did what was asked — acquired, refreshed or released.
	OK Status = iota + 1
	// Taken: the key holds another holder's token (on acquire: the lock is
	// held by another on this node).
	Taken
	// Expired: the key is gone (refresh, unlock): our lease ran out there,
	// or the node lost its data.
	Expired
	// Failed: no answer: a Redis or network error, or ErrNodeTimeout.
	Failed
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Taken:
		return "taken"
	case Expired:
		return "expired"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// NodeResult is one node's answer in a round.
type NodeResult struct {
	// Index is the node's position in the clients given to New.
	Index int
	// Name is the node's name from WithNodeNames ("" without it).
	Name   string
	Status Status
	// HolderTTL is, for a Taken node on acquire, the holder's remaining lease
	// as that node counts it (negative: the key has no expiry).
	HolderTTL time.Duration
	// Err is why a Failed node failed: the Redis or network error, or an
	// error wrapping ErrNodeTimeout.
	Err error
}

// String says who the node is and what it answered, for example
// `node 2 (redis-c): failed: redlock: node timed out after 50ms`.
func (r NodeResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %d", r.Index)
	if r.Name != "" {
		fmt.Fprintf(&b, " (%s)", r.Name)
	}
	b.WriteString(": ")
	switch r.Status {
	case Taken:
		b.WriteString("held by another")
		switch {
		case r.HolderTTL > 0:
			fmt.Fprintf(&b, " for %v more", r.HolderTTL)
		case r.HolderTTL < 0:
			b.WriteString(", with no expiry")
		}
	case Failed:
		b.WriteString("failed")
		if r.Err != nil {
			b.WriteString(": ")
			b.WriteString(r.Err.Error())
		}
	default:
		b.WriteString(r.Status.String())
	}
	return b.String()
}

// The rounds a QuorumError reports on.
const (
	opAcquire = "acquire"
	opRefresh = "refresh"
	opUnlock  = "unlock"
)

// QuorumError is the error of a round that did not reach a majority of the
// nodes (or, on acquire and refresh, reached one too late: no validity
// left). It lists what every node answered:
//
//	var qe *redlock.QuorumError
//	if errors.As(err, &qe) {
//		log.Printf("failing nodes: %v", qe.Indexes(redlock.Failed))
//	}
//
// It wraps, for errors.Is and errors.As:
//
//   - on acquire, lockbridge.ErrNotObtained — unless a node that failed
//     answered with a Redis error reply (NOPERM, scripting disabled, …)
//     and the majority was not reached: a misconfiguration, which Lock
//     does not retry;
//   - on refresh and unlock, lockbridge.ErrNotHeld when the lock is
//     certainly not ours any more — more than N−Need nodes said Taken or
//     Expired, so even the nodes that failed cannot make a majority; when
//     failures leave it undecided, no sentinel;
//   - on acquire, lockbridge.ErrUnknownOutcome instead, when nodes whose
//     acquire got no reply and whose undo failed too, or found no token of
//     ours (the SET may still be on its way, and run after it), could, with
//     the nodes that answered OK, make a majority: the lock may be held by
//     our token (by no Lock value: it expires after its ttl);
//   - and each Failed node's Err (a per-node timeout as ErrNodeTimeout; a
//     node whose command got no reply also wraps
//     lockbridge.ErrUnknownOutcome — on acquire, only while the round's
//     outcome is unknown: once the undo has settled it, it is not obtained).
type QuorumError struct {
	Key string
	// Need is the quorum, N/2+1; Got how many nodes answered OK.
	Need, Got int
	// Nodes are all the nodes' answers, by index.
	Nodes []NodeResult

	op string // opAcquire, opRefresh or opUnlock
	// validity is, on acquire and refresh when Got >= Need, what was left
	// of the lease after the round and the drift allowance: zero or
	// negative, which is why the round failed (the message says it).
	validity time.Duration
	unknown  bool // acquire: nodes whose outcome is unknown could make a majority
}

func (e *QuorumError) Error() string {
	var b strings.Builder
	switch e.op {
	case opAcquire:
		fmt.Fprintf(&b, "redlock: lock %q not obtained: ", e.Key)
	default:
		fmt.Fprintf(&b, "redlock: %s of lock %q failed: ", e.op, e.Key)
	}
	if e.Got >= e.Need {
		fmt.Fprintf(&b, "%d of %d nodes %s but no validity left (%v)", e.Got, len(e.Nodes), e.done(), e.validity)
	} else {
		fmt.Fprintf(&b, "%d of %d nodes %s, need %d", e.Got, len(e.Nodes), e.done(), e.Need)
	}
	for i, n := range e.Nodes {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if n.Status == Failed && n.Err != nil {
			n.Err = trimmed{n.Err}
		}
		b.WriteString(n.String())
	}
	return b.String()
}

// trimmed is an error without the package prefix its message repeats.
type trimmed struct{ error }

func (t trimmed) Error() string { return strings.TrimPrefix(t.error.Error(), "redlock: ") }

func (e *QuorumError) done() string {
	switch e.op {
	case opAcquire:
		return "acquired"
	case opRefresh:
		return "refreshed"
	case opUnlock:
		return "released"
	}
	return "ok"
}

// Unwrap returns the sentinel described on QuorumError and the failed
// nodes' errors.
func (e *QuorumError) Unwrap() []error {
	errs := make([]error, 0, 1+len(e.Nodes))
	switch {
	case e.op == opAcquire && e.unknown:
		errs = append(errs, lockbridge.ErrUnknownOutcome)
	case e.op == opAcquire && !e.refused():
		errs = append(errs, lockbridge.ErrNotObtained)
	case e.op == opAcquire:
		// A node answered with a Redis error (NOPERM, scripting disabled, …):
		// a misconfiguration, not a lock held by another; Lock must not
		// retry it until its context ends.
	case e.lost():
		errs = append(errs, lockbridge.ErrNotHeld)
	}
	for _, n := range e.Nodes {
		switch {
		case n.Err == nil:
		case e.op == opAcquire && !e.unknown:
			// The round is settled (the undo took our token back): a
			// node's lost reply no longer leaves the outcome unknown.
			errs = append(errs, settled{n.Err})
		default:
			errs = append(errs, n.Err)
		}
	}
	return errs
}

// settled is a node's error whose unknown outcome was settled: it matches
// everything the error matches but lockbridge.ErrUnknownOutcome.
type settled struct{ err error }

func (s settled) Error() string { return s.err.Error() }

func (s settled) Is(target error) bool {
	return target != lockbridge.ErrUnknownOutcome && errors.Is(s.err, target)
}

func (s settled) As(target any) bool { return errors.As(s.err, target) }

// unknownTimeout is a node's timeout while its command was on the wire: it
// wraps ErrNodeTimeout and lockbridge.ErrUnknownOutcome, and reads as the
// timeout.
type unknownTimeout struct{ err error }

func (u unknownTimeout) Error() string { return u.err.Error() }

func (u unknownTimeout) Unwrap() []error { return []error{u.err, lockbridge.ErrUnknownOutcome} }

// refused reports whether the quorum was missed with a node answering a
// Redis error reply, rather than other holders, timeouts or lost
// connections, which waiting may cure.
func (e *QuorumError) refused() bool {
	if e.Got >= e.Need {
		return false // the validity ran out: that is "not obtained"
	}
	for _, n := range e.Nodes {
		var re driver.ReplyError
		if n.Status == Failed && errors.As(n.Err, &re) {
			return true
		}
	}
	return false
}

// lost reports whether the nodes that did not fail say the lock is not ours
// beyond doubt: the OK and Failed ones together are no majority.
func (e *QuorumError) lost() bool {
	return e.Got+len(e.Indexes(Failed)) < e.Need
}

// Indexes returns the indexes of the nodes whose answer was s, in order.
func (e *QuorumError) Indexes(s Status) []int {
	var idx []int
	for _, n := range e.Nodes {
		if n.Status == s {
			idx = append(idx, n.Index)
		}
	}
	return idx
}

// errReleased is returned by Unlock and Refresh on a lock this Lock value
// already released.
var errReleased = fmt.Errorf("redlock: %w: already unlocked", lockbridge.ErrNotHeld)

// errNilLock is returned by the methods of a nil *Lock.
var errNilLock = fmt.Errorf("redlock: %w: nil lock", lockbridge.ErrNotHeld)

// errNilLockCall is returned by Refresh on a nil *Lock: a bad argument, and
// not held either.
var errNilLockCall = fmt.Errorf("redlock: %w: nil lock: %w", lockbridge.ErrInvalid, lockbridge.ErrNotHeld)

// errZeroLock is returned by the methods of a Lock not made by a Locker.
var errZeroLock = fmt.Errorf("redlock: %w: zero Lock (locks come from a Locker)", lockbridge.ErrInvalid)
