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
