# One target per habit. Each works from a fresh clone (it builds what it needs first).
SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.installed

.PHONY: all deps venv control-plane helm image lint types imports crds check-crds unit integration test soak demo bench fuzz mutate mutate-clean replay clean

all: test

deps:
	hack/install-deps.sh

$(VENV_STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

venv: $(VENV_STAMP)

control-plane:
	hack/control-plane-binaries.sh

# helm for the chart's tests (deploy/helm/ptah-operator), built and cached like the control plane.
helm:
	hack/helm-binary.sh

# The operator image the node imports into containerd (built with podman; the first build makes a Debian base).
image: venv
	PYTHON=$(PY) hack/container-image.sh

lint: venv
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	.venv/bin/lint-imports
	$(PY) -m ptah_operator.api.crdgen --check

crds: venv
	$(PY) -m ptah_operator.api.crdgen

unit: venv control-plane helm
	.venv/bin/pytest tests/unit

integration: deps venv control-plane
	.venv/bin/pytest tests/integration

# The README's test command: lint, types, import contracts, CRD drift, then every test
# (unit and integration against a real kube-apiserver, PostgreSQL and MariaDB).
test: deps venv control-plane helm image lint
	.venv/bin/pytest --cov --cov-report=term:skip-covered tests

# The schema engine's convergence harness at length: 500 random schema pairs with rows per
# engine against the real PostgreSQL and MariaDB (`make test` runs 16 per engine).
# SOAK_EXAMPLES=n for another count; a failure is shrunk and saved in .hypothesis/.
SOAK_EXAMPLES ?= 500
soak: deps venv
	PTAH_CONVERGENCE_RANDOM=1 PTAH_CONVERGENCE_EXAMPLES=$(SOAK_EXAMPLES) .venv/bin/pytest --timeout=0 \
		--hypothesis-show-statistics tests/integration/engine/schema/test_schema_convergence.py

# Mutation testing (issue #11) of reconcile/ and webhook/ against the unit suite that covers
# them ([tool.mutmut] in pyproject.toml), then the kill rate and every surviving mutant. Not part
# of `make test`: all of both packages takes from 2 hours to a day and a half on two cores
# (docs/contributing.md).
# MUTANTS narrows it to mutant names, e.g. make mutate MUTANTS='ptah_operator.reconcile.approvals.*'
# Incremental: mutmut keeps each function's results while its source (and what it calls) is
# unchanged, so a run picks up where the last one stopped (the whole run is longer than a
# session). A survivor is checked again only when named (MUTANTS=...), e.g. after a new test;
# `make mutate-clean` starts over.
MUTANTS ?=
mutate: venv
	nice -n 15 .venv/bin/mutmut run $(foreach m,$(MUTANTS),'$(m)')
	$(PY) hack/mutation_report.py $(foreach m,$(MUTANTS),'$(m)')

mutate-clean:
	rm -rf mutants

# Whether a restructuring of reconcile/ changed any Decision: the reconcile unit suite run on
# BASE and on the working tree, every pass's Decision compared (hack/decision_replay.py).
BASE ?= HEAD
replay: venv
	$(PY) hack/decision_replay.py --base $(BASE)

demo: deps venv control-plane image
	$(PY) hack/demo.py $(if $(KEEP),--keep)

# Benchmarks print figures and their baselines side by side; they are not part of `make test`.
# The schema benchmark's peers (SQLAlchemy's Inspector, schemainspect as migra uses it) live
# in their own directory, outside the product's environment.
BENCH_PEERS := $(HOME)/.cache/ptah/bench-peers
# The schema engine's baseline: the engine before issue #10's work (BENCH_SCHEMA_BASE=rev for
# another).
BENCH_SCHEMA_BASE ?= 3501aaf
# The migration CLI's peers, built from the Go module proxy (goose without the drivers it is
# not measured with).
GOOSE_VERSION ?= v3.30.1
MIGRATE_VERSION ?= v4.20.1
$(BENCH_PEERS)/bin/goose:
	GOBIN=$(BENCH_PEERS)/bin go install -tags 'no_clickhouse no_libsql no_mssql no_vertica no_ydb no_sqlite3' github.com/pressly/goose/v3/cmd/goose@$(GOOSE_VERSION)
$(BENCH_PEERS)/bin/migrate:
	GOBIN=$(BENCH_PEERS)/bin go install -tags 'postgres mysql' github.com/golang-migrate/migrate/v4/cmd/migrate@$(MIGRATE_VERSION)

bench: deps venv control-plane $(BENCH_PEERS)/bin/goose $(BENCH_PEERS)/bin/migrate
	PTAH_BENCH_PEERS=$(BENCH_PEERS) $(PY) tests/bench/bench_migrations.py
	test -d $(BENCH_PEERS)/schemainspect || $(PY) -m pip install -q --target $(BENCH_PEERS) 'sqlalchemy<2' psycopg2-binary schemainspect
	PTAH_BENCH_PEERS=$(BENCH_PEERS) $(PY) tests/bench/bench_schema.py --baseline $(BENCH_SCHEMA_BASE)
	$(PY) tests/bench/bench_cluster.py --resources 100,1000 --batch 100
	$(PY) tests/bench/bench_cluster.py --kind schema --resources 100,1000 --batch 100
	$(PY) tests/bench/bench_plugin.py

# The desired-schema readers, normalizers and renderer fuzzed far longer than `make test` does
# (Hypothesis; PTAH_FUZZ_EXAMPLES examples per property).
FUZZ_EXAMPLES ?= 5000
fuzz: venv
	PTAH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) .venv/bin/pytest -q -p no:cacheprovider tests/unit/engine/schema/test_schema_fuzz.py

clean:
	rm -rf .venv .mypy_cache .ruff_cache .pytest_cache .coverage
