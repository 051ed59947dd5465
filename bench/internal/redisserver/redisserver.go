package redisserver

import "github.com/lockbridge/lockbridge/internal/testing/redistest"

// Server is a running redis-server. Close stops it.
type Server struct {
	*redistest.Server
	stop func()
}

// Start starts one redis-server on a free loopback port.
func Start() (*Server, error) {
	s, stop, err := redistest.Standalone()
	if err != nil {
		return nil, err
	}
	return &Server{Server: s, stop: stop}, nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() { s.stop() }

// Cluster is a running Redis Cluster of masters. Close stops it.
type Cluster struct {
	*redistest.Cluster
	stop func()
}

// StartCluster starts a Redis Cluster of n masters (1 to 16) on free loopback
// ports, the slots split evenly in node order.
func StartCluster(n int) (*Cluster, error) {
	c, stop, err := redistest.StandaloneCluster(n)
	if err != nil {
		return nil, err
	}
	return &Cluster{Cluster: c, stop: stop}, nil
}

// Close stops the nodes and removes their directories.
func (c *Cluster) Close() { c.stop() }
