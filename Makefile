# dlqt — see README.md. `make run` to use it, `make test` to test it.
GO       ?= go
BIN      := bin/dlqt
PKGS     := ./...
export GOFLAGS := -mod=readonly

.PHONY: build run demo demo-snapshot test test-compat unit bench fuzz lint prepare clean

build:
	$(GO) build -o $(BIN) .

# The TUI against the local broker; when none answers it says so and opens
# the bundled demo snapshot.
run: build
	./$(BIN) --demo-fallback

# Realistic scenarios made to die for real in vhost dlqt-demo, then the TUI on it.
demo: build prepare
	./$(BIN) demo load
	./$(BIN) --vhost dlqt-demo

# Unit, integration (real broker, a vhost per test) and end-to-end (tmux) tests.
# The broker, million and e2e packages mostly wait on the broker and tmux:
# scripts/go-test runs the e2e package as three shards and the broker package
# as two beside the others (-p 2: the million package beside the small
# ones), and ends with a table of the shards' times and slowest tests.
#
# The damaged-journal tests run again under -race: bbolt's page check runs
# in a goroutine of its own, and one left reading a closed journal crashed
# verify (a few seconds).
test: prepare
	$(GO) vet $(PKGS)
	@GO=$(GO) bash scripts/go-test -count=1 -p 2 -timeout 14m -- $(PKGS)
	$(GO) test -count=1 -race -run 'Damaged|Refused|Overwritten' ./internal/journal/

# The broker integration and end-to-end suites against RabbitMQ 3.10 (this
# machine's node), 4.0 and 4.3 (nodes beside it from scripts/rabbitmq-node,
# Debian chroots cached in /var/cache/dlqt-compat); a table per version.
test-compat: prepare
	@GO=$(GO) bash scripts/test-compat

# Every test that needs no broker and no tmux, in every package: -short
# skips the others (brokertest.SkipShort, startTerm).
unit:
	$(GO) test -count=1 -short $(PKGS)

# BenchmarkReplayLarge (./internal/broker/) replays one 32 MiB message (and
# 128 MiB on 3.x) as dlqt replay does and moves it with amqp091-go alone:
# allocations and peak RSS per byte of body, dlqt vs raw.
# The broker benchmark (bench/browse) loads BENCH_N (100,000; 1000000 for
# the big run) x BENCH_SIZE bytes into a vhost of its own and compares
# dlqt groups --json with a raw amqp091-go reader, BENCH_ROUNDS rounds.
# The move benchmark (bench/replay) moves BENCH_N messages between two
# queues with dlqt replay one way and a Shovel (ack-mode on-confirm, the
# rabbitmq_shovel plugin, enabled here) the other, BENCH_ROUNDS rounds.
# The audit-stream benchmark (bench/trail) times journal appends with and
# without the team's audit stream: p50 and p99 of the stream's part;
# BenchmarkVerifier (./internal/trail/) what checking the stream keeps a record.
bench: prepare
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./internal/triage/... ./internal/journal/ ./internal/trail/ ./internal/views/ ./internal/spill/
	$(GO) test -run '^$$' -bench . -benchtime 3x -count=1 ./internal/broker/
	$(GO) build -o $(BIN) . && $(GO) build -o bin/rawread ./bench/rawread
	$(GO) run ./bench/browse
	rabbitmq-plugins enable rabbitmq_shovel >/dev/null
	$(GO) run ./bench/replay
	$(GO) run ./bench/trail

# Each fuzz target for FUZZTIME (CI runs only their seed corpora, in `make test`).
FUZZTIME ?= 30s
fuzz:
	@for pkg in ./internal/triage/ ./internal/triage/headerjson/ ./internal/triage/redact/ ./internal/triage/sanitize/ ./internal/triage/filter/ ./internal/broker/ ./internal/spill/; do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; done; done

# gofmt, go vet and staticcheck (pinned; fetched through the module proxy).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.6.1
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

# Rebuild the bundled demo snapshot from the scenarios on a real broker.
demo-snapshot: build prepare
	./$(BIN) demo load
	./$(BIN) --vhost dlqt-demo snapshot --all-parking --accept-delivery-cost --raw --yes --out testdata/demo.snapshot.json

prepare:
	@bash .ci/prepare

clean:
	rm -rf bin
