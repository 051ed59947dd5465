package impls

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrBusy is what TryLock returns when another holder has the lock.
var ErrBusy = errors.New("impls: lock held by another")

// ErrNoWait is what Lock returns for an implementation that has no waiting
// acquire (the floor and the seed replay).
var ErrNoWait = errors.New("impls: no waiting acquire")

// Locker is one implementation.
type Locker interface {
	// TryLock makes one attempt; ErrBusy when the lock is held.
	TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error)
	// Lock waits, with the waiting settings the Locker was built with, until
	// it has the lock or ctx ends. An implementation that gives up by itself
	// (redsync after its tries) returns an error; the caller tries again.
	Lock(ctx context.Context, key string, ttl time.Duration) (Held, error)
}

// Held is a held lock.
type Held interface {
	Unlock(ctx context.Context) error
}

// Wait selects the waiting settings of Locker.Lock.
type Wait int

const (
	// Recommended is the implementation's default or documented waiting.
	Recommended Wait = iota
	// Tight polls every TightPoll (and, for lockbridge modern, turns
	// release notifications off so that it polls like the others).
	Tight
)

// TightPoll is the poll interval of the Tight settings.
const TightPoll = time.Millisecond

func (w Wait) String() string {
	if w == Tight {
		return "tight"
	}
	return "recommended"
}

// Impl is one implementation under test.
type Impl struct {
	// ID is short and stable, for benchmark names: "floor", "modern", …
	ID string
	// Name is for the report.
	Name string
	// Waits describes the waiting settings, for implementations that can
	// wait; empty otherwise.
	Waits map[Wait]string
	// Takeover is set for the implementations of the Java scheme, which
	// take over an expired lock themselves.
	Takeover bool
	// Client is the Redis client it runs on (GoRedis when empty).
	Client string
	// New returns the locker on t with the waiting settings w. A locker
	// that opened a client of its own is a Closer.
	New func(t Target, w Wait) (Locker, error)
}

// Target is the Redis an implementation runs against: one server or a Redis
// Cluster.
type Target struct {
	// GoRedis is the go-redis client an implementation on go-redis uses:
	// a *redis.Client on one server, a *redis.ClusterClient on a cluster.
	GoRedis redis.UniversalClient
	// Addrs are the server's address, or the cluster's nodes: the
	// implementations on other clients open a client of their own to them.
	Addrs []string
	// Cluster is set for a Redis Cluster.
	Cluster bool
}

// On is the target of the go-redis client c, on one server.
func On(c *redis.Client) Target {
	return Target{GoRedis: c, Addrs: []string{c.Options().Addr}}
}

// OnCluster is the target of the go-redis cluster client c, whose nodes are
// addrs.
func OnCluster(c *redis.ClusterClient, addrs []string) Target {
	return Target{GoRedis: c, Addrs: addrs, Cluster: true}
}

// errNoCluster is what New returns for an implementation that has no
// cluster client.
var errNoCluster = errors.New("impls: no Redis Cluster client")

// ClientName is Client, GoRedis when empty.
func (i Impl) ClientName() string {
	if i.Client == "" {
		return GoRedis
	}
	return i.Client
}

// CanWait reports whether Lock is implemented.
func (i Impl) CanWait() bool { return len(i.Waits) > 0 }

// NewClient returns the go-redis client every implementation gets: the
// go-redis defaults (pool of 10 × GOMAXPROCS connections), retries off, and
// context deadlines applied by go-redis itself (ContextTimeoutEnabled).
func NewClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
}

// NewClusterClient is NewClient's counterpart on a Redis Cluster: the
// go-redis defaults (a pool of 10 × GOMAXPROCS connections per node), retries
// and redirects off (as lockbridge's go-redis adapter requires), context
// deadlines applied by go-redis itself.
func NewClusterClient(addrs []string) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, MaxRedirects: -1,
		ContextTimeoutEnabled: true})
}

// All returns every implementation, in report order: the go-redis floor,
// lockbridge on go-redis (modern, legacy atomic, legacy classic, the seed
// replay), the peers on go-redis, then the floor and lockbridge modern on
// redigo, and on rueidis beside rueidislock.
func All() []Impl {
	all := []Impl{Floor}
	all = append(all, lockbridgeImpls...)
	all = append(all, BSM, Redsync)
	return append(all, FloorRedigo, ModernRedigo, FloorRueidis, ModernRueidis, RueidisLock)
}

// Scale returns the implementations the scale benchmarks (bench-scale)
// compare: the floors, lockbridge modern and migrate in each phase on
// go-redis and on rueidis, bsm/redislock and rueidislock.
func Scale() []Impl {
	s := []Impl{Floor, Modern}
	s = append(s, MigrateGoRedis...)
	s = append(s, BSM, FloorRueidis, ModernRueidis)
	s = append(s, MigrateRueidis...)
	return append(s, RueidisLock)
}

// ByID returns the implementation with the given ID.
func ByID(id string) (Impl, bool) {
	for _, i := range append(All(), Scale()...) {
		if i.ID == id {
			return i, true
		}
	}
	return Impl{}, false
}
