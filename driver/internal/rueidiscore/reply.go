package rueidiscore

import (
	"errors"
	"net"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter"
)

// Message is the part of a reply message (*rueidis.RedisMessage,
// *valkey.ValkeyMessage) that Normalise reads.
type Message[M any] interface {
	*M
	IsNil() bool
	IsInt64() bool
	IsFloat64() bool
	IsBool() bool
	IsArray() bool
	IsMap() bool
	Error() error
	ToString() (string, error)
	AsInt64() (int64, error)
	AsFloat64() (float64, error)
	AsBool() (bool, error)
	ToArray() ([]M, error)
	ToMap() (map[string]M, error)
}

// Normalise returns a reply as the driver wants it: string, int64, float64,
// []any or nil; a RESP3 map flattened into an array of keys and values as
// RESP2 sends it, a RESP3 boolean as 1 or nil. An error reply, at the top or
// inside an array, is a driver.ReplyError.
func Normalise[M any, P Message[M]](m P) (any, error) {
	switch {
	case m.IsNil():
		return nil, nil
	case m.Error() != nil:
		return nil, driver.ReplyError(m.Error().Error())
	case m.IsInt64():
		return m.AsInt64()
	case m.IsFloat64():
		return m.AsFloat64()
	case m.IsBool():
		b, err := m.AsBool()
		if err != nil || !b {
			return nil, err
		}
		return int64(1), nil
	case m.IsArray():
		elems, err := m.ToArray()
		if err != nil {
			return nil, err
		}
		return NormaliseArray[M, P](elems)
	case m.IsMap():
		kv, err := m.ToMap()
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, 2*len(kv))
		for k, v := range kv {
			v := v
			n, err := Normalise[M, P](&v)
			if err != nil {
				return nil, err
			}
			out = append(out, k, n)
		}
		return out, nil
	}
	return String(m.ToString()) // simple, bulk and verbatim strings, big numbers
}

// NormaliseArray returns the elements of an array reply normalised (see
// Normalise), in a []any.
func NormaliseArray[M any, P Message[M]](elems []M) (any, error) {
	out := make([]any, len(elems))
	for i := range elems {
		var err error
		if out[i], err = Normalise[M, P](&elems[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ok is the reply "OK", boxed once: SET and most writes answer it.
var ok any = "OK"

// String returns a string reply as an any, "OK" without allocating.
func String(s string, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if s == "OK" {
		return ok, nil
	}
	return s, nil
}

// sendError marks the errors that come before anything was written: a
// failed dial (the clients dial lazily, and a command on a connection whose
// dial failed gets the dial's error). Every other error that is not a reply
// may have followed the write.
func sendError(err error) error {
	if err == nil {
		return nil // before the target of errors.As below, which escapes
	}
	var re driver.ReplyError
	if errors.As(err, &re) {
		return err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return adapter.NotSent(err)
	}
	return err
}
