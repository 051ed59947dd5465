package rueidisadapter_test

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/lockbridge/lockbridge/adaptertest"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
)

// RESP2: replies come untyped, and pub/sub messages arrive on the
// subscribed connection instead of as RESP3 pushes.
func TestConformanceRESP2(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			return rueidisadapter.New(client(t,
				rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, AlwaysRESP2: true, DisableCache: true}))
		},
		NewCluster: func(t *testing.T, addrs []string) driver.Client {
			return rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: addrs, AlwaysRESP2: true, DisableCache: true}))
		},
	})
}
