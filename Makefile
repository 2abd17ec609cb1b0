# golf-crawler: `make help` lists the targets. Go tooling stays the source of truth; make only names commands.
SHELL := /bin/bash
.DEFAULT_GOAL := help
STACK := compose/dev/stack
ENV := eval "$$($(STACK) env)"
GO_TEST_FLAGS ?= -count=1 -timeout 14m

help: ## list the targets
	@grep -hE '^[a-z/-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

demo: ## the main job end to end: stack, migrate, consumer, simulated site crawled on a fast schedule, booking_lifetimes, then the dashboard's URL (served until Ctrl-C)
	compose/dev/deps stack
	compose/dev/demo

alerts-demo: ## just the alerts (~20 s, no Kafka, no PostgreSQL): simulator, crawler run --watches and a local webhook that prints each alert
	compose/dev/alerts-demo

practice: ## the replay practice walkthrough: ~7k events ingested once, replayed twice, nothing added
	compose/dev/practice

test: deps stack/up ## every test, against the real stack (installs what is missing and starts the stack first)
	$(ENV); go vet ./... && go test $(GO_TEST_FLAGS) ./...

test/race: deps stack/up ## every test with the race detector
	$(ENV); go test -race $(GO_TEST_FLAGS) ./...

bench: stack/up ## every benchmark against the real stack; writes BENCHMARKS.md
	compose/dev/bench

chaos: stack/up ## the chaos suite (release gate, not in make test): SIGKILLs, restarts, soak, hostile pages
	compose/dev/chaos

chaos-cluster: ## the three-node Kafka gate (not in make test or make chaos): node and controller SIGKILLs, a rolling restart, a paused node, consumer kills
	compose/dev/chaos-cluster

bench-cluster: ## the three-node Kafka overhead (not in make bench): 1M drain by 3 consumer processes vs 1, rebalance pause, one node down vs all up; writes BENCHMARKS.md's Cluster section
	compose/dev/bench-cluster

fuzz: ## fuzz every Fuzz* target in the module (found by compose/dev/fuzz, not listed) for FUZZTIME each (default 30s)
	compose/dev/fuzz

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(shell go env GOPATH)/bin/golangci-lint

lint: ## golangci-lint (.golangci.yml: staticcheck, errorlint, depguard import boundaries), chaos tag included
	@[ -x $(GOLANGCI_LINT) ] || go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	$(GOLANGCI_LINT) run --build-tags chaos ./...

deps: ## install what make test needs when it is missing (apt-get as root, else the one command to run): compose/dev/deps --help
	compose/dev/deps test

build: ## build both binaries into bin/
	go build -o bin/ ./cmd/...

stack/up: ## start PostgreSQL and Kafka (idempotent)
	$(STACK) up

stack/down: ## stop the stack (data kept)
	$(STACK) down

stack/status: ## what runs where
	$(STACK) status

stack/reset: ## stop the stack and wipe its data
	$(STACK) reset

.PHONY: help deps demo alerts-demo practice chaos chaos-cluster bench-cluster test test/race bench fuzz lint build stack/up stack/down stack/status stack/reset
