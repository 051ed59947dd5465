package doctor

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// checkClock compares this host's clock with each server's TIME. It is
// informational: lockbridge never lets the server's clock grant a lock, so
// its safety does not depend on this offset. (The Java scheme does depend
// on the skew between its clients' clocks, which doctor cannot see.)
func checkClock(ctx context.Context, r *run) (Finding, bool) {
	return perNode(ctx, r, IDClock, func(ctx context.Context, n Node) Finding {
		before := r.cfg.now()
		v, err := r.do(ctx, n.Client, "TIME")
		after := r.cfg.now()
		if err != nil {
			return Finding{Severity: Unknown, Summary: "could not read the server's TIME", Detail: errText(err)}
		}
		server, ok := parseTime(v)
		if !ok {
			return Finding{Severity: Unknown, Summary: fmt.Sprintf("unexpected TIME reply %#v", v)}
		}
		rtt := after.Sub(before)
		mid := before.Add(rtt / 2)
		off := server.Sub(mid)
		dir := "ahead of"
		if off < 0 {
			dir, off = "behind", -off
		}
		sum := fmt.Sprintf("the server's clock is %v %s this host's (± %v); informational only", roundOffset(off), dir,
			roundOffset(rtt/2+time.Millisecond))
		if roundOffset(off) == 0 {
			sum = fmt.Sprintf("the server's clock agrees with this host's (± %v); informational only",
				roundOffset(rtt/2+time.Millisecond))
		}
		return Finding{
			Severity: OK,
			Summary:  sum,
			Detail: "lockbridge never lets the server's clock grant a lock, so this offset does not affect its safety. " +
				"The legacy (Java) scheme judges expiry by each client's own clock: the skew between the clients' clocks " +
				"bounds how early a takeover can happen, and doctor cannot see it.",
		}
	})
}

// roundOffset rounds d to the millisecond, as the offset is not better
// known than that.
func roundOffset(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// parseTime reads a TIME reply: seconds and microseconds.
func parseTime(v any) (time.Time, bool) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return time.Time{}, false
	}
	var n [2]int64
	for i, x := range a {
		switch x := x.(type) {
		case string:
			v, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			n[i] = v
		case int64:
			n[i] = x
		default:
			return time.Time{}, false
		}
	}
	return time.Unix(n[0], n[1]*1000), true
}
