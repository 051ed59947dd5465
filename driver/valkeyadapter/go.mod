module github.com/lockbridge/lockbridge/driver/valkeyadapter

go 1.25.0

replace github.com/lockbridge/lockbridge => ../..

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/lockbridge/lockbridge v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	github.com/valkey-io/valkey-go v1.0.79
	go.uber.org/goleak v1.3.0
)

require (
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.opentelemetry.io/otel v1.29.0 // indirect
	go.opentelemetry.io/otel/metric v1.29.0 // indirect
	go.opentelemetry.io/otel/trace v1.29.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
