# Entry points: `make check` (the fast loop), `make test` (also what .ci/run
# runs), `make lint`, `make bench`, `make bench-scale`, `make soak`.

# staticcheck 2025.1.1; the module proxy knows the release by its semver tag.
# Every check is on, the style checks too (package and exported-name
# comments, naming): the tree passes them all.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.6.1
STATICCHECK_FLAGS := -checks all

# The adapters whose client libraries need a newer Go than the library's
# go.mod: each is a module of its own (driver/*/go.mod), tested and linted
# beside the main one.
ADAPTER_MODULES := driver/rueidisadapter driver/valkeyadapter

# The examples that need modules the library must not depend on (the
# OpenTelemetry SDK, a Prometheus exporter): each is a module of its own,
# tested and linted beside the main one.
EXAMPLE_MODULES := examples/otel

.PHONY: check test lint bench bench-scale soak model model-long interop interop-long java java-spring java-bench

# The packages of the main module that make check tests: all but the JVM
# interop, the soak, the spin models and the examples.
CHECK_PKGS = $$(go list ./... | grep -v -E '/(interop|soak|model|examples)(/|$$)')

# The contributors' fast loop: needs Go and redis-server only, installs
# nothing, and runs the unit and fault tests of the main module's packages
# without the race detector (no interop, soak, model, bench, examples or
# adapter modules: make test runs those). Under 3 minutes on two cores: four
# test binaries at a time (-p 4), as the packages mostly wait on timers and
# on redis-server rather than compute.
check:
	@command -v redis-server >/dev/null 2>&1 || { echo "make check: redis-server not found: sudo apt-get install -y redis-server, or brew install redis (make test installs it)" >&2; exit 1; }
	go test -count=1 -p 4 -timeout 5m $(CHECK_PKGS)

test:
	./scripts/setup.sh
	go vet ./...
	go test -race -count=1 -timeout 15m ./...
	for m in $(ADAPTER_MODULES) $(EXAMPLE_MODULES); do (cd $$m && go vet ./... && go test -race -count=1 -timeout 5m ./...) || exit 1; done
	$(MAKE) --no-print-directory java-spring-test
	./model/run.sh

# Interop with the real Java lock libraries (interop/, docs/java.md): builds
# lockbridge-java (java/) and the Java worker with Maven (running their JUnit
# tests: the golden vectors, lockbridge-java on a real redis-server), then
# runs Go lockers beside Spring Data Redis, jedis-lock, Spring Integration,
# ShedLock, Redisson (4.x and 3.x) and lockbridge-java (the mixed Go/Java
# migrating fleet) on real redis-servers. It also builds the Spring test
# applications' executable jars (java/spring boot3-app and boot4-app, with
# the modules they are made of, tests skipped: java-spring runs them; the
# lockbridge-java they need is installed by the first build) and runs them as
# processes: both Boot lines migrating beside Go followers, and each line's
# rolling deploy from RedisLockRegistry and RedisLockProvider to lockbridge's
# beans (interop/spring_test.go; about a minute with the build). Part of
# `go test ./...` (so of make test); this target runs it alone.
interop:
	./scripts/setup.sh
	go test -race -count=1 -timeout 10m -v ./interop

# lockbridge-java alone: its JUnit tests (golden vectors, a real redis-server).
java:
	./scripts/setup.sh
	cd java && mvn -q -B test

# The Spring modules (java/spring: the Boot 3.5 and 4.0 starters, the
# LockRegistry beans, the ShedLock provider) and their @SpringBootTest and
# rolling-deploy tests on real redis-servers. lockbridge-java is installed
# first (its tests skipped: make java and the interop tests run them), with
# its test-jar, whose redis-server fixtures the Spring tests start.
java-spring:
	./scripts/setup.sh
	$(MAKE) --no-print-directory java-spring-test

java-spring-test:
	cd java && mvn -q -B -DskipTests install
	cd java/spring && mvn -q -B install

# The JMH benchmarks of lockbridge-java beside Redisson, RedisLockRegistry
# and a raw Lettuce floor (java/jmh; not in make test): rewrites the Java
# section of docs/performance.md (the Go report, make bench, keeps it).
# JMH_ARGS passes io.lockbridge.jmh.Report's options: --rounds N (default 5),
# --iteration-ms N (default 1000), --handoff-rounds N (default 3),
# --handoff-ms N (default 2000), --only a,b, --render FILE (rewrite the
# section from the figures a run saved in java/jmh/target/java-bench.ser,
# as after editing java/jmh/src/main/resources/analysis.md). About 15
# minutes on two cores.
JMH_ARGS ?=
java-bench:
	./scripts/setup.sh
	cd java && mvn -q -B -DskipTests install
	cd java/spring && mvn -q -B -DskipTests -pl testing -am install
	cd java/jmh && mvn -q -B package && java -jar target/lockbridge-jmh.jar $(JMH_ARGS)

# The long interop runs: 20,000 acquisitions per pair and 60 s of saturated
# contention per pair for the fairness figures; the Go/Java fleets on
# Sentinel and on Cluster with a failover (TestInteropJavaMigratesTopologies).
interop-long:
	./scripts/setup.sh
	LOCKBRIDGE_INTEROP_LONG=1 go test -race -count=1 -timeout 60m -v ./interop

# The spin models of the lock protocols (model/README.md): every real model
# verified, every mutant caught; a few minutes on two cores.
model:
	./model/run.sh

# The runs too long for make test (model/runs-long.txt).
model-long:
	RUNS=model/runs-long.txt MODEL_MEMLIM=$${MODEL_MEMLIM:-20000} ./model/run.sh

# The soak under faults (soak): a mixed fleet on real redis-servers
# with cuts, dropped replies, latency, pauses, restarts and clock skew. Its
# short form (40 s) runs in `make test`; this runs it for SOAK (default 10m)
# and prints the figures table. SOAK_SEED picks the seed.
SOAK ?= 10m
SOAK_SEED ?= 1
soak:
	./scripts/setup.sh
	LOCKBRIDGE_SOAK=$(SOAK) LOCKBRIDGE_SOAK_SEED=$(SOAK_SEED) go test -race -count=1 -timeout 0 -run '^TestSoak$$' -v ./soak

# lint: gofmt, go vet and staticcheck on every module, and scripts/treecheck:
# no build output (a compiled binary, a jar, a profile) and no file over
# 1 MiB outside testdata is tracked.
lint:
	go run ./scripts/treecheck
	@files="$$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go' -not -path './vendor/*')"; \
	unformatted="$$(if [ -n "$$files" ]; then gofmt -l $$files; fi)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files are not formatted; run gofmt -w on them:"; \
		echo "$$unformatted"; \
		exit 1; \
	fi
	go vet ./...
	go run $(STATICCHECK) $(STATICCHECK_FLAGS) ./...
	for m in $(ADAPTER_MODULES) $(EXAMPLE_MODULES); do (cd $$m && go vet ./... && go run $(STATICCHECK) $(STATICCHECK_FLAGS) ./...) || exit 1; done

# bench/ is its own module (the peer libraries stay out of go.mod); it starts
# its own redis-server and rewrites docs/performance.md and the hand-off chart
# under bench/results/. A few minutes on two cores.
bench:
	cd bench && go run ./cmd/benchreport -out ../docs/performance.md -chart results/handoff.svg -json results/results.json

# The scale benchmarks (bench/cmd/benchscale): the uncontended cycle against
# the minimal correct lock with the cores awake and halting, many locks on one
# server and on clusters of 1, 3 and 6 primaries, 8 and 64 waiters each on a
# client of its own, and 0.5 and 2 ms of added round trip through a proxy that
# delays every frame without serializing them. It rewrites only its own
# section of docs/performance.md (make bench keeps it), its charts and raw
# results under bench/results/. Not part of make test; about 6 minutes on two
# cores. It starts its own redis-servers, and as root it keeps the cores from
# halting while it measures (a CPU latency request).
bench-scale:
	cd bench && go run ./cmd/benchscale -out ../docs/performance.md -charts results -json results/scale.json

# Fleet size (issue 29): simulated fleets of 100, 1,000 and 10,000 migrate
# lockers on one server and a 3-primary cluster; rewrites the "fleet"
# section of docs/performance.md (which `make bench` carries over) and
# bench/results/fleet.svg. About 8 minutes on
# two cores; part of `make bench-scale`, not of `make test`.
.PHONY: bench-fleet
bench-fleet:
	cd bench && go run ./cmd/fleetbench -doc ../docs/performance.md -chart results/fleet.svg
bench-scale: bench-fleet
