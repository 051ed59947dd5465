package legacyproto

import (
	"strconv"
	"time"
)

// OwnerArgs returns the owner-window arguments of a release or refresh of
// the expiry w written with lease, as the Lua fragment legacy_owner_args
// (internal/protocol/luafrag/legacy_args.lua) takes them: the codec id, the
// unit id, w, the lease in the unit, the profile's clock read now (the
// caller's own clock decides, as the Java seed's release does: ours only
// while now < w) and the server-clock margin in milliseconds (rounded up).
func (p Profile) OwnerArgs(w int64, lease time.Duration) []any {
	return p.OwnerFixed().Window(p, strconv.FormatInt(w, 10), p.LeaseArg(lease)).Append(make([]any, 0, 6))
}

// OwnerFixed holds the owner-window arguments that are the same for every
// release and refresh under one profile — the codec id, the unit id and the
// server-clock margin — each boxed once, so that a caller that keeps it
// (a Locker) formats and boxes only what changes: w, the lease and now.
type OwnerFixed struct {
	codec, unit, margin any
}

// OwnerFixed returns p's fixed owner-window arguments (see OwnerArgs).
func (p Profile) OwnerFixed() OwnerFixed {
	m := p.ServerClockMargin()
	return OwnerFixed{
		codec:  p.CodecID(),
		unit:   p.UnitID(),
		margin: strconv.FormatInt(int64((m+time.Millisecond-1)/time.Millisecond), 10),
	}
}

// OwnerWindow is the six owner-window arguments (OwnerArgs), ARGV[1] to
// ARGV[6] of legacy/scripts/release.lua and refresh.lua, in their order.
type OwnerWindow struct {
	Codec  any    // ARGV[1]: the value codec id
	Unit   any    // ARGV[2]: the unit id
	W      string // ARGV[3]: our expiry, in decimal (WDecimal)
	Lease  any    // ARGV[4]: the lease in the unit (as LeaseArg formats it, boxed or not)
	Now    string // ARGV[5]: the profile's clock, read when the window is made
	Margin any    // ARGV[6]: the server-clock margin in milliseconds
}

// Window returns the owner window of the expiry w written with lease,
// reading p's clock now. f must be p.OwnerFixed().
func (f OwnerFixed) Window(p Profile, w string, lease any) OwnerWindow {
	return OwnerWindow{Codec: f.codec, Unit: f.unit, W: w, Lease: lease,
		Now: strconv.FormatInt(p.Time(p.Now()), 10), Margin: f.margin}
}

// Append appends o's six arguments to dst, in the scripts' order, and
// returns the extended slice.
func (o OwnerWindow) Append(dst []any) []any {
	return append(dst, o.Codec, o.Unit, o.W, o.Lease, o.Now, o.Margin)
}

// LeaseArg returns lease in the unit, in decimal: the lease argument of the
// owner window.
func (p Profile) LeaseArg(lease time.Duration) string {
	return strconv.FormatInt(p.Units(lease), 10)
}

// WDecimal returns the expiry w in decimal, given value, the bytes w encodes
// to (EncodeValue): the decimal and json-number codecs write exactly those
// digits, so value itself is returned and nothing is formatted.
func (p Profile) WDecimal(w int64, value string) string {
	if p.value == ValueDecimal || p.value == ValueJSONNumber {
		return value
	}
	return strconv.FormatInt(w, 10)
}
