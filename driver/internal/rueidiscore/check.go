package rueidiscore

import (
	"fmt"
	"reflect"

	"github.com/lockbridge/lockbridge"
)

// Check returns an error wrapping lockbridge.ErrInvalid when client c, as
// its library's NewClient returns it, would send a command again after it
// may have reached the server; lib names the library in the message.
//
// The one such setting is ClientOption.ConnLifetime: when a connection's
// lifetime ends, the client closes it, and a command still waiting for its
// reply then (the server silent for a second) fails with the library's
// internal "connection is expired" error, which the client's Do answers by
// sending the command again on a new connection (client.go, cluster.go,
// sentinel.go: `if err == errConnExpired { goto retry }`). The clients keep
// the setting in an unexported field (hasLftm, or the options of a
// standalone client); Check reads it by reflection, and refuses a client of
// any other type (a wrapper, a mock), for it cannot tell.
func Check(c any, lib string) error {
	why := ""
	switch set, known := connLifetime(c); {
	case c == nil:
		why = "nil client"
	case !known:
		why = fmt.Sprintf("a %T: the adapter cannot tell whether it was built with ConnLifetime, which resends "+
			"commands; pass the client %s.NewClient returns", c, lib)
	case set:
		why = "the client was built with ConnLifetime: when a connection's lifetime ends under a command whose reply " +
			"has not come, the client sends the command again on a new connection; build it without ConnLifetime"
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%sadapter: %w: %s", lib, lockbridge.ErrInvalid, why)
}

// connLifetime reads whether c has a connection lifetime: its hasLftm field
// (single, cluster and sentinel clients) or its options' ConnLifetime
// (standalone clients with replicas or redirects).
func connLifetime(c any) (set, known bool) {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false, false
	}
	s := v.Elem()
	if f := s.FieldByName("hasLftm"); f.IsValid() && f.Kind() == reflect.Bool {
		return f.Bool(), true
	}
	if o := s.FieldByName("opt"); o.IsValid() && o.Kind() == reflect.Pointer && !o.IsNil() &&
		o.Elem().Kind() == reflect.Struct {
		if f := o.Elem().FieldByName("ConnLifetime"); f.IsValid() && f.Kind() == reflect.Int64 {
			return f.Int() > 0, true
		}
	}
	return false, false
}
