# The two commands that matter: `make run` (both services with demo data) and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export NODE_OPTIONS ?= --enable-source-maps

CENTRAL_PORT ?= 3000
CLASSROOM_PORT ?= 3001
# Each service has its own database: one DATABASE_URL for both would put both schemas in one database.
CENTRAL_DATABASE_URL ?= sqlite:data/central.sqlite
CLASSROOM_DATABASE_URL ?= sqlite:data/classroom.sqlite
export CENTRAL_DATABASE_URL CLASSROOM_DATABASE_URL

.PHONY: help install build lint run test test-sqlite test-pg migrate seed-demo bench clean deploy-test box-package \
	box-test box-test-arm64 box-release image-test fleet-test

help:
	@echo "make run        install, build, migrate, load demo data, start central :$(CENTRAL_PORT) and classroom :$(CLASSROOM_PORT)"
	@echo "make test       install what the tests need and run the suite (SQLite, then PostgreSQL)"
	@echo "make lint       ESLint (typescript-eslint, 120 columns) over every workspace"
	@echo "make migrate    apply pending migrations to both databases (CENTRAL_DATABASE_URL, CLASSROOM_DATABASE_URL)"
	@echo "make seed-demo  load the demo data set (development and test only)"
	@echo "make bench      run the benchmarks"
	@echo "make deploy-test  the deploy/ kit on this machine: Caddy, 2 central instances, a classroom server, PostgreSQL, Redis, S3"
	@echo "make box-package ARCH=amd64|arm64  the classroom server's Debian package in build/box/"
	@echo "make box-test   the amd64 package's install, upgrade and removal in a Debian 12 chroot, its staged releases and rollback, then power cuts of a box in a VM"
	@echo "make box-release BOX_RELEASE_KEY=…  both architectures' packages into the signed apt repository BOX_REPO (build/box-repo)"
	@echo "make box-test-arm64  the arm64 package, built and tested in an arm64 Debian 12 chroot under qemu-user"
	@echo "make image-test   the container image and deploy/compose/ with podman (installs podman, makes a local base image)"
	@echo "make fleet-test   2 central instances (PostgreSQL, HAProxy) and 3 classroom boxes syncing over emulated 2G and offline links"

node_modules/.package-lock.json: package.json package-lock.json $(wildcard */package.json)
	npm install --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json

build: install
	npx tsc -b
	@node -e 'const {execSync}=require("child_process");let c="unknown";try{c=execSync("git rev-parse --short HEAD",{stdio:["ignore","pipe","ignore"]}).toString().trim()}catch{};require("fs").writeFileSync("build-info.json",JSON.stringify({build:c+"@"+new Date().toISOString()})+"\n")'

# ESLint with typescript-eslint, from the lock file's development dependencies.
lint: install
	npx eslint .

define one_database_url
	@if [ -n "$${DATABASE_URL:-}" ]; then echo "DATABASE_URL is set: it would give both services one database. Set CENTRAL_DATABASE_URL and CLASSROOM_DATABASE_URL instead (unset DATABASE_URL)." >&2; exit 2; fi
endef

migrate: build
	$(one_database_url)
	DATABASE_URL="$$CENTRAL_DATABASE_URL" npm run --silent migrate -w central
	DATABASE_URL="$$CLASSROOM_DATABASE_URL" npm run --silent migrate -w classroom

# Demo data and the local run are development: placeholder secrets and /docs are allowed there only.
seed-demo run: export NODE_ENV ?= development

seed-demo: migrate
	DATABASE_URL="$$CENTRAL_DATABASE_URL" npm run --silent seed-demo -w central
	DATABASE_URL="$$CLASSROOM_DATABASE_URL" npm run --silent seed-demo -w classroom

run: seed-demo
	CENTRAL_PORT=$(CENTRAL_PORT) CLASSROOM_PORT=$(CLASSROOM_PORT) bash scripts/dev/run-both.sh

# SQLite always; PostgreSQL too when TEST_DATABASE_URL is set, when one answers on loopback, or in CI
# (where scripts/ci/ensure-services.sh installs and starts PostgreSQL and Redis if they are absent).
test: build
	@set -euo pipefail; \
	if [ -n "$${CI:-}" ] && [ -z "$${TEST_DATABASE_URL:-}" ]; then eval "$$(bash scripts/ci/ensure-services.sh)"; export TEST_DATABASE_URL TEST_DATABASE_REPLICA_URL TEST_REDIS_URL TEST_MYSQL_URL; fi; \
	if [ -z "$${TEST_DATABASE_URL:-}" ] && pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then eval "$$(bash scripts/ci/ensure-services.sh)"; export TEST_DATABASE_URL TEST_DATABASE_REPLICA_URL TEST_REDIS_URL TEST_MYSQL_URL; fi; \
	echo "== tests on SQLite"; \
	env -u TEST_DATABASE_URL LMS_TEST_PASS=sqlite npx vitest run; \
	if [ -n "$${TEST_DATABASE_URL:-}" ]; then echo "== tests on PostgreSQL"; npx vitest run; fi

# deploy/README.md: Caddy (TLS) and HAProxy in front of two central instances and a classroom server on PostgreSQL, Redis
# and an S3-compatible store, on loopback; installs Caddy, PostgreSQL and Redis when absent.
deploy-test: build
	@set -euo pipefail; \
	bash scripts/ci/ensure-caddy.sh; bash scripts/ci/ensure-haproxy.sh; \
	eval "$$(bash scripts/ci/ensure-services.sh)"; \
	TEST_DATABASE_URL="$${DEPLOY_TEST_DATABASE_URL:-$$TEST_DATABASE_URL}" TEST_REDIS_URL="$${DEPLOY_TEST_REDIS_URL:-$$TEST_REDIS_URL}" \
	node scripts/dist/deploy-test/index.js

# The classroom box (docs/classroom-box.md): as root, with Debian's debootstrap and qemu (installed when
# absent); root filesystems are cached in /var/cache/lms-rootfs/.
ARCH ?= amd64
box-package: build
	@bash scripts/ci/ensure-box-tools.sh
	bash scripts/box/build-deb.sh $(ARCH)

box-test: build
	@set -euo pipefail; bash scripts/ci/ensure-box-tools.sh; \
	deb=$$(bash scripts/box/build-deb.sh amd64 | tail -n 1); \
	bash scripts/box/package-test.sh amd64 "$$deb"; \
	bash scripts/box/release-test.sh amd64 "$$deb"; \
	bash scripts/box/vm-power-cut.sh "$$deb"

# docs/operations.md, "Box releases in stages": the packages of BOX_RELEASE_ARCHS into the signed apt repository
# BOX_REPO (kept between releases), signed with GnuPG's key BOX_RELEASE_KEY; prints the key's fingerprint.
BOX_RELEASE_ARCHS ?= amd64 arm64
BOX_REPO ?= build/box-repo
box-release: build
	@set -euo pipefail; bash scripts/ci/ensure-box-tools.sh; debs=(); \
	for a in $(BOX_RELEASE_ARCHS); do debs+=("$$(bash scripts/box/build-deb.sh "$$a" | tail -n 1)"); done; \
	bash scripts/box/box-release.sh "$(BOX_REPO)" "$${debs[@]}"

box-test-arm64: build
	@set -euo pipefail; bash scripts/ci/ensure-box-tools.sh; \
	deb=$$(bash scripts/box/build-deb.sh arm64 | tail -n 1); \
	bash scripts/box/package-test.sh arm64 "$$deb"

# deploy/README.md, "Containers": builds the image on a base made locally and runs the compose kit's services with
# podman behind Caddy; installs podman, buildah, runc and podman-compose when absent (scripts/ci/ensure-podman.sh).
# The PostgreSQL replica cluster that ensure-services.sh starts on port 5433 is stopped at the end when this run
# started it (one that answered before is the machine's, and is left running).
image-test: build
	@set -euo pipefail; \
	bash scripts/ci/ensure-caddy.sh; bash scripts/ci/ensure-haproxy.sh; \
	replica_before=0; pg_isready -h 127.0.0.1 -p 5433 -q 2>/dev/null && replica_before=1; \
	eval "$$(bash scripts/ci/ensure-services.sh)"; \
	rc=0; TEST_DATABASE_URL="$${DEPLOY_TEST_DATABASE_URL:-$$TEST_DATABASE_URL}" TEST_REDIS_URL="$${DEPLOY_TEST_REDIS_URL:-$$TEST_REDIS_URL}" \
	node scripts/dist/image-test/index.js || rc=$$?; \
	if [ "$$replica_before" = 0 ] && pg_isready -h 127.0.0.1 -p 5433 -q 2>/dev/null; then \
	  cluster="$${LMS_REPLICA_CLUSTER:-lms_replica}"; \
	  ver=$$(pg_lsclusters -h | awk -v n="$$cluster" '$$2 == n && $$3 == 5433 { print $$1; exit }'); \
	  if [ -n "$$ver" ]; then echo "image-test: stopping the replica cluster $$ver/$$cluster it started"; \
	    pg_ctlcluster --skip-systemctl-redirect "$$ver" "$$cluster" stop || rc=1; fi; \
	fi; \
	exit $$rc

# docs/fleet-protocol.md, "The end-to-end test": central's two instances behind HAProxy on a PostgreSQL database of
# the run's own, three classroom boxes on SQLite, each box's link through the link emulator of scripts/src/fleet-test.
fleet-test: build
	@set -euo pipefail; bash scripts/ci/ensure-haproxy.sh; \
	eval "$$(bash scripts/ci/ensure-services.sh)"; \
	TEST_DATABASE_URL="$${FLEET_TEST_DATABASE_URL:-$$TEST_DATABASE_URL}" node scripts/dist/fleet-test/index.js

bench: build
	node scripts/dist/bench/index.js

clean:
	rm -rf */dist */*.tsbuildinfo shared/web/dist shared/web/*.tsbuildinfo build-info.json build/box
