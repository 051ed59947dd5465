package impls

import (
	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/modern"
)

// ModernRueidis is modern.Locker through the rueidis adapter, on a rueidis
// client of its own to the same server (defaults: the commands of
// concurrent callers pipelined on one connection). It is measured by the go
// benchmarks and the report beside modern on go-redis. Its Locker is also
// a Closer, closing that client.
var ModernRueidis = Impl{
	ID:     "modern-rueidis",
	Name:   "lockbridge modern (rueidis adapter)",
	Client: Rueidis,
	Waits:  Modern.Waits,
	New: func(t Target, w Wait) (Locker, error) {
		rc, err := newRueidis(t)
		if err != nil {
			return nil, err
		}
		return closing{Locker: lbLocker{modern.New(rueidisadapter.New(rc), modernOptions(w)...)}, close: rc.Close}, nil
	},
}

// Closer is a Locker holding a client of its own, to close when done.
type Closer interface {
	Locker
	Close()
}

type closing struct {
	Locker
	close func()
}

func (c closing) Close() { c.close() }
