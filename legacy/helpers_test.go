package legacy_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/legacy"
)

// spy is a driver.Client that forwards every call to a real client,
// records the commands sent (a script by its name), and can run a hook just
// before a command goes out: how tests land another client's command
// between two commands of a sequence. Nothing is mocked: every command
// reaches the real server.
type spy struct {
	driver.Client

	mu     sync.Mutex
	cmds   []string
	before map[string][]func() // command -> hooks, each run once
}

func newSpy(c driver.Client) *spy { return &spy{Client: c, before: map[string][]func(){}} }

// Before runs f once, just before the next cmd ("SETNX", "GET", "GETSET",
// "DEL", "EVAL legacy/scripts/acquire.lua", …) is sent.
func (s *spy) Before(cmd string, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before[cmd] = append(s.before[cmd], f)
}

func (s *spy) record(cmd string) {
	s.mu.Lock()
	s.cmds = append(s.cmds, cmd)
	hooks := s.before[cmd]
	var f func()
	if len(hooks) > 0 {
		f, s.before[cmd] = hooks[0], hooks[1:]
	}
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

// Commands returns the commands sent so far and forgets them.
func (s *spy) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cmds
	s.cmds = nil
	return c
}

// Count is how many commands were sent so far (round trips: the driver
// sends one command per call, save an EVAL retry after NOSCRIPT).
func (s *spy) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cmds)
}

func (s *spy) Eval(ctx context.Context, sc *driver.Script, keys []string, args ...any) (any, error) {
	s.record("EVAL " + sc.Name())
	return s.Client.Eval(ctx, sc, keys, args...)
}

func (s *spy) SetNX(ctx context.Context, key, value string) (bool, error) {
	s.record("SETNX")
	return s.Client.SetNX(ctx, key, value)
}

func (s *spy) Get(ctx context.Context, key string) (string, bool, error) {
	s.record("GET")
	return s.Client.Get(ctx, key)
}

func (s *spy) GetSet(ctx context.Context, key, value string) (string, bool, error) {
	s.record("GETSET")
	return s.Client.GetSet(ctx, key, value)
}

func (s *spy) Del(ctx context.Context, key string) (bool, error) {
	s.record("DEL")
	return s.Client.Del(ctx, key)
}

func (s *spy) SetNXPX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	s.record("SET NX PX")
	return s.Client.SetNXPX(ctx, key, value, ttl)
}

func (s *spy) Do(ctx context.Context, args ...any) (any, error) {
	name, _ := args[0].(string)
	s.record(name)
	return s.Client.Do(ctx, args...)
}

// attempt is one TryLock, with the *legacy.Lock and, when a live value
// holds the lock, how long its holder has left (0 when unknown).
func attempt(ctx context.Context, lk *legacy.Locker, key string,
	ttl time.Duration) (*legacy.Lock, time.Duration, error) {
	l, err := lk.TryLock(ctx, key, ttl)
	if err != nil {
		var no *lockbridge.NotObtainedError
		if errors.As(err, &no) {
			return nil, no.HolderTTL, err
		}
		return nil, 0, err
	}
	return l.(*legacy.Lock), 0, nil
}
