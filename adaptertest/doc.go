// Package adaptertest is the conformance suite every adapter must pass.
// It runs against real redis-server processes started by internal/testing/redistest:
// a single server, and a 3-master Redis Cluster for adapters with a cluster
// client. It also drives real locks (legacy, modern) through the adapter
// while slots move, so it sits above the lock packages, at the module root,
// and not under driver/, which imports nothing of the module but the root
// package (docs/architecture.md).
//
// An adapter's test calls Run with a Factory:
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, adaptertest.Factory{
//			New: func(t *testing.T, addr string) driver.Client { … },
//		})
//	}
package adaptertest
