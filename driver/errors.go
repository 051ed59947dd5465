package driver

import (
	"errors"
	"strings"
)

// Class is a kind of Redis error reply. The classes below match, with
// errors.Is, every error the locks return that carries such a reply, however
// deeply wrapped:
//
//	if errors.Is(err, driver.ErrNoPerm) { … the ACL user lacks a command … }
type Class struct {
	name  string
	match func(reply string) bool
}

func (c *Class) Error() string { return "redis: " + c.name }

func code(prefix string) func(string) bool {
	return func(reply string) bool {
		return reply == prefix || strings.HasPrefix(reply, prefix+" ")
	}
}

// The classes of Redis error replies the locks tell apart.
var (
	// ErrNoPerm: the ACL user may not run a command, a key or a channel —
	// sent directly (NOPERM) or inside a script ("ERR The user executing
	// the script can't run this command").
	ErrNoPerm = &Class{"NOPERM", func(r string) bool {
		return code("NOPERM")(r) || strings.Contains(r, "user executing the script can't run")
	}}
	// ErrWrongType: the key holds a value of another type.
	ErrWrongType = &Class{"WRONGTYPE", code("WRONGTYPE")}
	// ErrLoading: the server is loading its data set after a restart.
	ErrLoading = &Class{"LOADING", code("LOADING")}
	// ErrReadOnly: a write reached a replica.
	ErrReadOnly = &Class{"READONLY", code("READONLY")}
	// ErrMoved: the key's slot is served by another node (MOVED or ASK).
	ErrMoved = &Class{"MOVED", func(r string) bool { return code("MOVED")(r) || code("ASK")(r) }}
	// ErrClusterDown: the cluster cannot serve the slot now (CLUSTERDOWN,
	// TRYAGAIN during a resharding, MASTERDOWN on a replica without its
	// primary).
	ErrClusterDown = &Class{"CLUSTERDOWN", func(r string) bool {
		return code("CLUSTERDOWN")(r) || code("TRYAGAIN")(r) || code("MASTERDOWN")(r)
	}}
	// ErrOOM: the server is at maxmemory and refuses writes.
	ErrOOM = &Class{"OOM", code("OOM")}
	// ErrNoScripting: the server does not run scripts (EVAL renamed or
	// disabled, or NOSCRIPT even after EVAL).
	ErrNoScripting = &Class{"NOSCRIPTING", func(r string) bool {
		l := strings.ToLower(r)
		return code("NOSCRIPT")(r) || strings.Contains(l, "unknown command 'eval") ||
			strings.Contains(l, "unknown command `eval")
	}}
	// ErrBusy: a script or function is running too long.
	ErrBusy = &Class{"BUSY", code("BUSY")}
)

var classes = []*Class{ErrNoPerm, ErrWrongType, ErrLoading, ErrReadOnly, ErrMoved, ErrClusterDown, ErrOOM,
	ErrNoScripting, ErrBusy}

// Is reports whether the reply belongs to target, a *Class such as
// ErrNoPerm. It lets errors.Is(err, driver.ErrNoPerm) see through wrapping.
func (e ReplyError) Is(target error) bool {
	c, ok := target.(*Class)
	return ok && c.match(string(e))
}

// classOf returns the class of err's Redis error reply, or nil when err
// carries no reply of a known class.
func classOf(err error) *Class {
	var re ReplyError
	if !errors.As(err, &re) {
		return nil
	}
	for _, c := range classes {
		if c.match(string(re)) {
			return c
		}
	}
	return nil
}

// Permitted reports whether the server answered the call that returned
// err without refusing it for the ACL user's rights: err is nil, or an error
// reply of another class than ErrNoPerm. An error from before the send, or a
// reply that never came, tells nothing and reports false.
func Permitted(err error) bool {
	var re ReplyError
	return err == nil || (errors.As(err, &re) && !errors.Is(err, ErrNoPerm))
}
