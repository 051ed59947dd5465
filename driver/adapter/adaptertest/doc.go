// Package adaptertest is the conformance suite every adapter must pass.
// It runs against real redis-server processes started by internal/testing/redistest:
// a single server, and a 3-master Redis Cluster for adapters with a cluster
// client.
//
// An adapter's test calls Run with a Factory:
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, adaptertest.Factory{
//			New: func(t *testing.T, addr string) driver.Client { … },
//		})
//	}
package adaptertest
