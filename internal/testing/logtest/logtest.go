package logtest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Record is one captured record: its level, message and attributes (the
// logger's own attributes included), values as strings.
type Record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// Recorder is a slog.Handler that keeps every record. Safe for concurrent
// use.
type Recorder struct {
	mu      *sync.Mutex // shared with the handlers WithAttrs makes
	records *[]Record
	attrs   []slog.Attr
}

// New returns a Recorder and a logger writing to it.
func New() (*Recorder, *slog.Logger) {
	r := &Recorder{mu: new(sync.Mutex), records: new([]Record)}
	return r, slog.New(r)
}

// Enabled records every level.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps rec.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	out := Record{Level: rec.Level, Msg: rec.Message, Attrs: map[string]string{}}
	for _, a := range r.attrs {
		out.Attrs[a.Key] = a.Value.String()
	}
	rec.Attrs(func(a slog.Attr) bool {
		out.Attrs[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	*r.records = append(*r.records, out)
	r.mu.Unlock()
	return nil
}

// WithAttrs returns a handler adding attrs to the records it keeps here.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Recorder{mu: r.mu, records: r.records, attrs: append(r.attrs[:len(r.attrs):len(r.attrs)], attrs...)}
}

// WithGroup is not used by the library: groups are flattened.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Records returns the records whose message contains msg.
func (r *Recorder) Records(msg string) []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Record
	for _, rec := range *r.records {
		if strings.Contains(rec.Msg, msg) {
			out = append(out, rec)
		}
	}
	return out
}

// Wait returns the first record whose message contains msg, waiting up to
// d for it; ok is false when none came.
func (r *Recorder) Wait(msg string, d time.Duration) (rec Record, ok bool) {
	deadline := time.Now().Add(d)
	for {
		if rs := r.Records(msg); len(rs) > 0 {
			return rs[0], true
		}
		if time.Now().After(deadline) {
			return Record{}, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
