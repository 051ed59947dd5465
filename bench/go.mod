module github.com/lockbridge/lockbridge/bench

go 1.26.0

replace github.com/lockbridge/lockbridge => ../

replace github.com/lockbridge/lockbridge/driver/rueidisadapter => ../driver/rueidisadapter

require (
	github.com/bsm/redislock v0.9.4
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/gomodule/redigo v1.9.3
	github.com/lockbridge/lockbridge v0.0.0-00010101000000-000000000000
	github.com/lockbridge/lockbridge/driver/rueidisadapter v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.48.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.opentelemetry.io/otel v1.29.0 // indirect
	go.opentelemetry.io/otel/metric v1.29.0 // indirect
	go.opentelemetry.io/otel/trace v1.29.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
