package impls

import (
	"context"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/migrate"
)

// MigrateNamespace is the namespace the migrate lockers heartbeat into: its
// keys share one hash slot ("{bench}"), which the cluster scenarios watch
// for heat.
const MigrateNamespace = "bench"

// migratePhases are the phases a migration goes through, in order.
var migratePhases = []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
	migrate.PhaseModern}

// MigrateGoRedis are migrate.Locker in each phase (WithPhase, fixed) through
// the go-redis adapter, heartbeating into MigrateNamespace (WithNamespace).
var MigrateGoRedis = migrateImpls(GoRedis, "migrate", "lockbridge migrate", func(t Target) (driver.Client, func(),
	error) {
	return goredis.New(t.GoRedis), func() {}, nil
})

// MigrateRueidis are MigrateGoRedis through the rueidis adapter, each on a
// rueidis client of its own.
var MigrateRueidis = migrateImpls(Rueidis, "migrate-rueidis", "lockbridge migrate (rueidis adapter)",
	func(t Target) (driver.Client, func(), error) {
		rc, err := newRueidis(t)
		if err != nil {
			return nil, nil, err
		}
		return rueidisadapter.New(rc), rc.Close, nil
	})

func migrateImpls(client, id, name string, open func(Target) (driver.Client, func(), error)) []Impl {
	out := make([]Impl, 0, len(migratePhases))
	for _, p := range migratePhases {
		out = append(out, Impl{
			ID:     id + "-" + p.String(),
			Name:   name + ", " + p.String(),
			Client: client,
			Waits:  map[Wait]string{Recommended: "defaults"},
			New: func(t Target, _ Wait) (Locker, error) {
				c, closeClient, err := open(t)
				if err != nil {
					return nil, err
				}
				l := migrate.New(c, migrate.WithPhase(p), migrate.WithNamespace(MigrateNamespace))
				return closing{Locker: lbLocker{l}, close: func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = l.Close(ctx)
					closeClient()
				}}, nil
			},
		})
	}
	return out
}
