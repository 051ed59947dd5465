package adapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// How the Client of Wrap follows a Redis Cluster's refusals. Each of them —
// MOVED, ASK, TRYAGAIN, CLUSTERDOWN — is an error reply Redis sends instead
// of running the command, so sending the command again (to the node named,
// or later) is its first run, not a resend.
const (
	// MaxRedirects is how many MOVED or ASK replies in a row one command
	// follows before the last is returned; a pause (TRYAGAIN, CLUSTERDOWN)
	// starts the count again.
	MaxRedirects = 5
	// ClusterRetryFor is the longest one command waits in all, pausing
	// through TRYAGAIN and CLUSTERDOWN replies (and redirects it cannot
	// follow at once), before the last is returned: less when its context
	// ends first. A slot migrating with its keys answers TRYAGAIN to a
	// command with several keys of which it has only some, until the move
	// ends.
	ClusterRetryFor = 2 * time.Second
	// firstPause and maxPause bound the pauses, which double from the first.
	firstPause = 2 * time.Millisecond
	maxPause   = 100 * time.Millisecond
)

// Redirector is an optional interface of a cluster Conn whose client library
// leaves redirects to its caller (go-redis with MaxRedirects -1): DoAt sends
// one command to the node at addr, as a MOVED or ASK reply names it, under
// the rules of Conn.Do — preceded, when asking, by ASKING on the same
// connection. When the Conn has no client for addr, DoAt returns an error
// wrapping ErrNoRoute, having sent nothing; the command is then sent again
// through Do after a pause, by which time the client may know the new slot
// map.
type Redirector interface {
	DoAt(ctx context.Context, addr string, asking bool, args ...any) (any, error)
}

// ErrNoRoute is what Redirector.DoAt returns when it has no client for the
// address (nothing was sent).
var ErrNoRoute = errors.New("no client for the node a redirect names")

// redirectKind is what a cluster refusal asks of the client.
type redirectKind int

const (
	notRedirect redirectKind = iota
	moved                    // MOVED slot addr: the slot lives at addr now
	ask                      // ASK slot addr: this once, at addr after ASKING
	pause                    // TRYAGAIN, CLUSTERDOWN: later
)

// redirectOf classifies err, a cluster refusal or not, and returns the
// address a MOVED or ASK reply names ("host:port").
func redirectOf(err error) (redirectKind, string) {
	var re driver.ReplyError
	if err == nil || !errors.As(err, &re) {
		return notRedirect, ""
	}
	switch f := strings.Fields(string(re)); {
	case len(f) == 3 && f[0] == "MOVED":
		return moved, f[2]
	case len(f) == 3 && f[0] == "ASK":
		return ask, f[2]
	case errors.Is(re, driver.ErrClusterDown), errors.Is(re, driver.ErrMoved):
		return pause, ""
	}
	return notRedirect, ""
}

// follower is the state of one command following cluster refusals.
type follower struct {
	hops    int           // MOVED/ASK followed since the last pause
	pause   time.Duration // the next pause
	waited  time.Duration // paused in all
	noRoute bool          // the last redirect could not be followed directly
}

// next decides what to do after err: send to addr (asking for ASK), send
// again through the client (addr ""), or stop (ok false: return err). A
// pause is slept here, honouring ctx: when ctx ends meanwhile, ok is false
// and stop is the error to return instead of err.
func (f *follower) next(ctx context.Context, err error, direct bool) (addr string, asking, ok bool, stop error) {
	k, a := redirectOf(err)
	switch {
	case k == notRedirect:
		return "", false, false, nil
	case (k == moved || k == ask) && direct && !f.noRoute:
		if f.hops == MaxRedirects {
			return "", false, false, nil
		}
		f.hops++
		return a, k == ask, true, nil
	}
	// TRYAGAIN or CLUSTERDOWN; or a redirect that the client did not follow
	// itself (past its own bound) or that has no route: the client learns
	// the new slot map meanwhile.
	f.noRoute = false
	if f.pause == 0 {
		f.pause = firstPause
	}
	if f.waited+f.pause > ClusterRetryFor {
		return "", false, false, nil
	}
	t := time.NewTimer(f.pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return "", false, false, fmt.Errorf("%w (the cluster refused the command, which did not run: %w)", ctx.Err(), err)
	case <-t.C:
	}
	f.waited += f.pause
	f.pause = min(2*f.pause, maxPause)
	f.hops = 0
	return "", false, true, nil
}

// follow sends the command of args (or words, through wc when it is not
// nil) again after err, a cluster refusal of its first send, for as long as
// the refusals allow (see MaxRedirects, ClusterRetryFor), and returns the
// last reply. Only a refusal leads to another send: any other error —
// above all one after which the command may have run — ends it.
func (c *client) follow(ctx context.Context, err error, args []any, wc WordsConn, words []string) (any, error) {
	var f follower
	rd, direct := c.c.(Redirector)
	for {
		addr, asking, ok, stop := f.next(ctx, err, direct)
		if stop != nil {
			return nil, stop
		}
		if !ok {
			return nil, err
		}
		var (
			r any
			e error
		)
		switch {
		case addr != "":
			if args == nil {
				args = wordArgs(words)
			}
			r, e = rd.DoAt(ctx, addr, asking, args...)
			if errors.Is(e, ErrNoRoute) {
				f.noRoute = true // err stays the refusal: pause, then send through the client
				continue
			}
		case wc != nil:
			r, e = wc.DoWords(ctx, words)
		default:
			r, e = c.c.Do(ctx, args...)
		}
		if e == nil {
			return r, nil
		}
		err = e
	}
}

// wordArgs boxes words for Redirector.DoAt.
func wordArgs(words []string) []any {
	args := make([]any, len(words))
	for i, w := range words {
		args[i] = w
	}
	return args
}
