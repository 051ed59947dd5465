package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge/migrate/control"
)

// watchFleet is `fleet --watch`: the fleet's status read every interval
// until ctx ends (Ctrl-C). On a terminal each reading replaces the last
// (cursor home, the report, the rest of the screen cleared, so no line of a
// longer earlier report stays); otherwise the readings follow each other,
// each headed by the time it was read, or as one JSON document a line. A
// reading that fails is shown and the watch goes on.
func watchFleet(ctx context.Context, e *env, cf *connFlags, ctl *control.Controller, interval time.Duration,
	asJSON bool) error {
	tty := e.isTTY && !asJSON
	if tty {
		fmt.Fprint(e.stdout, "\x1b[H\x1b[2J")
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for n := 0; ; n++ {
		cctx, cancel := cf.callCtx(ctx)
		st, err := ctl.Status(cctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var b bytes.Buffer
		switch {
		case asJSON && err != nil:
			_ = writeJSONLine(&b, map[string]string{"schema": "lockbridge.fleet/v1", "namespace": cf.ns(e),
				"error": message(err)})
		case asJSON:
			_ = writeJSONLine(&b, fleetDoc(st))
		default:
			head := fmt.Sprintf("lockbridge fleet --watch: every %v, Ctrl-C to stop; read %s", interval,
				time.Now().Format("15:04:05"))
			if !tty && n > 0 {
				b.WriteString("\n")
			}
			b.WriteString(head + "\n\n")
			if err != nil {
				fmt.Fprintf(&b, "lockbridge: %s (retrying)\n", message(err))
			} else {
				printStatus(&b, st)
			}
		}
		if tty {
			// Home, the report with each line's rest cleared, then the
			// rest of the screen cleared.
			out := bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte("\x1b[K\n"))
			fmt.Fprintf(e.stdout, "\x1b[H%s\x1b[J", out)
		} else {
			_, _ = e.stdout.Write(b.Bytes())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
