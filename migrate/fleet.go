package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// Client is one migrate.Locker as the fleet registry knows it.
type Client struct {
	ID      string    `json:"id"`
	Phase   Phase     `json:"phase"`
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	Seen    time.Time `json:"seen"`    // its last heartbeat
	Expires time.Time `json:"expires"` // when the entry is dead without another heartbeat
}

// Live reports whether the client's last heartbeat is still valid at now.
func (c Client) Live(now time.Time) bool { return now.Before(c.Expires) }

// Sighting is the latest evidence that a legacy-only locker still exists: a
// DualWrite or DualRead locker met a live legacy lock with no modern key.
type Sighting struct {
	At    time.Time // zero when none was ever recorded
	Key   string    // the legacy key met then
	Count int64     // sightings recorded in this namespace
}

// store reads and writes a namespace's phase, registry and sightings.
type store struct {
	c driver.Client
	k nsKeys
}

func (s store) phase(ctx context.Context) (Phase, error) {
	v, ok, err := s.c.Get(ctx, s.k.phase)
	if err != nil {
		return 0, fmt.Errorf("migrate: read phase: %w", err)
	}
	if !ok {
		return PhaseLegacy, nil
	}
	p, err := ParsePhase(v)
	if err != nil {
		return 0, fmt.Errorf("migrate: phase key %q holds %q: %w", s.k.phase, v, err)
	}
	return p, nil
}

// setPhase moves from → to; it fails when the stored phase is not from.
func (s store) setPhase(ctx context.Context, from, to Phase, now time.Time) error {
	r, err := s.c.Eval(ctx, phaseSetScript, []string{s.k.phase, s.k.channel, s.k.since},
		from.String(), to.String(), publishCommand(s.c), strconv.FormatInt(now.UnixMilli(), 10))
	if err != nil {
		return fmt.Errorf("migrate: set phase: %w", err)
	}
	if r != int64(1) {
		return fmt.Errorf("migrate: %w: phase moved to %v meanwhile", ErrPhaseChanged, r)
	}
	return nil
}

// since returns when the current phase was set; zero when never.
func (s store) since(ctx context.Context) (time.Time, error) {
	v, ok, err := s.c.Get(ctx, s.k.since)
	if err != nil || !ok {
		return time.Time{}, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}

func (s store) heartbeat(ctx context.Context, c Client) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("migrate: heartbeat: %w", err)
	}
	if _, err := s.c.Do(ctx, "HSET", s.k.fleet, c.ID, string(b)); err != nil {
		return fmt.Errorf("migrate: heartbeat: %w", err)
	}
	return nil
}

func (s store) leave(ctx context.Context, id string) error {
	if _, err := s.c.Do(ctx, "HDEL", s.k.fleet, id); err != nil {
		return fmt.Errorf("migrate: leave fleet: %w", err)
	}
	return nil
}

// clients lists the registry, sorted by ID. Entries that do not parse are
// skipped: they are not ours to interpret.
func (s store) clients(ctx context.Context) ([]Client, error) {
	r, err := s.c.Do(ctx, "HGETALL", s.k.fleet)
	if err != nil {
		return nil, fmt.Errorf("migrate: read fleet: %w", err)
	}
	flat, _ := r.([]any)
	var out []Client
	for i := 0; i+1 < len(flat); i += 2 {
		v, _ := flat[i+1].(string)
		var c Client
		if json.Unmarshal([]byte(v), &c) == nil && c.Phase.Valid() {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// prune removes entries dead for longer than grace.
func (s store) prune(ctx context.Context, clients []Client, now time.Time, grace time.Duration) error {
	for _, c := range clients {
		if now.After(c.Expires.Add(grace)) {
			if err := s.leave(ctx, c.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s store) recordSighting(ctx context.Context, now time.Time, legacyKey string) error {
	if _, err := s.c.Eval(ctx, sightingScript, []string{s.k.sighting}, strconv.FormatInt(now.UnixMilli(), 10), legacyKey); err != nil {
		return fmt.Errorf("migrate: record legacy sighting: %w", err)
	}
	return nil
}

func (s store) sighting(ctx context.Context) (Sighting, error) {
	r, err := s.c.Do(ctx, "HGETALL", s.k.sighting)
	if err != nil {
		return Sighting{}, fmt.Errorf("migrate: read legacy sighting: %w", err)
	}
	flat, _ := r.([]any)
	var out Sighting
	for i := 0; i+1 < len(flat); i += 2 {
		f, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		switch f {
		case "at":
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
				out.At = time.UnixMilli(ms)
			}
		case "key":
			out.Key = v
		case "count":
			out.Count, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return out, nil
}
