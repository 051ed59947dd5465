package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	goredislib "github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver/goredis"
)

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "the Redis server (host:port)")
	listen := flag.String("listen", ":2112", "where to serve /metrics")
	flag.Parse()
	if err := run(*addr, *listen); err != nil {
		fmt.Fprintln(os.Stderr, "otel:", err)
		os.Exit(1)
	}
}

func run(addr, listen string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	t, err := NewTelemetry(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		return err
	}
	defer t.Shutdown(context.Background())
	rc := goredislib.NewClient(&goredislib.Options{Addr: addr, MaxRetries: -1})
	defer rc.Close()
	c := goredis.New(rc)

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(t.Registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Addr: listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go func() {
		ns := fmt.Sprintf("otel-example-%d", time.Now().UnixNano())
		if err := MigrateCycle(ctx, c, t, ns, "orders"); err != nil {
			t.Logger.Error("migrate cycle", "error", err)
		}
		for ctx.Err() == nil {
			if err := LockCycle(ctx, c, t, "otel-example:orders", 250*time.Millisecond); err != nil && ctx.Err() == nil {
				t.Logger.Error("lock cycle", "error", err)
			}
		}
	}()
	fmt.Fprintf(os.Stderr, "serving metrics at http://%s/metrics\n", listen)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}
