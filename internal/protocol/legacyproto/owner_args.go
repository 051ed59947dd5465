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
	return p.OwnerFixed().Append(make([]any, 0, 6), p, strconv.FormatInt(w, 10), p.LeaseArg(lease))
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

// Append appends the six owner-window arguments (OwnerArgs) to dst and
// returns the extended slice: f's codec and unit, w (in decimal: WDecimal),
// lease (as LeaseArg formats it, boxed or not), p's clock read now, and f's
// margin. f must be p.OwnerFixed().
func (f OwnerFixed) Append(dst []any, p Profile, w string, lease any) []any {
	return append(dst, f.codec, f.unit, w, lease, strconv.FormatInt(p.Time(p.Now()), 10), f.margin)
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
