package main

import (
	"fmt"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
)

// lockers are implementations' lockers on one deployment, each on a client
// of its own, and a twin of each client's floor (the floor's partner in the
// cycle pairs).
type lockers struct {
	d       *deployment
	l       map[string]impls.Locker
	twin    map[string]impls.Locker // by client
	closers []func()
}

func newLockers(d *deployment) *lockers {
	return &lockers{d: d, l: map[string]impls.Locker{}, twin: map[string]impls.Locker{}}
}

// open returns a new locker of im on a client of its own.
func (s *lockers) open(im impls.Impl, w impls.Wait) (impls.Locker, error) {
	t, closeClient := s.d.target()
	l, err := im.New(t, w)
	if err != nil {
		closeClient()
		return nil, fmt.Errorf("%s on %s: %w", im.Name, s.d.name, err)
	}
	s.closers = append(s.closers, closeClient)
	if c, ok := l.(impls.Closer); ok {
		s.closers = append(s.closers, c.Close)
	}
	return l, nil
}

// add opens a locker of every implementation named by ids (recommended
// waiting), and of its client's floor's twin.
func (s *lockers) add(ids ...string) error {
	for _, id := range ids {
		im, ok := impls.ByID(id)
		if !ok {
			return fmt.Errorf("no implementation %q", id)
		}
		if _, done := s.l[id]; done {
			continue
		}
		l, err := s.open(im, impls.Recommended)
		if err != nil {
			return err
		}
		s.l[id] = l
		if _, ok := s.twin[im.ClientName()]; !ok {
			fl, _ := impls.ByID(floorOf(im))
			if s.twin[im.ClientName()], err = s.open(fl, impls.Recommended); err != nil {
				return err
			}
		}
	}
	return nil
}

// floorOf is the ID of the floor on im's client.
func floorOf(im impls.Impl) string { return floorIDOfClient(im.ClientName()) }

// floorIDOfClient is the ID of the floor on client (go-redis or rueidis).
func floorIDOfClient(client string) string {
	if client == impls.Rueidis {
		return impls.FloorRueidis.ID
	}
	return impls.Floor.ID
}

func (s *lockers) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}
