# Custodian: `make run` serves the demo, `make test` runs the full suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint fmt migrate clean fuzz faults bench bench-smoke docs typescript-schema \
	container-wheels container-base container-service-images container-image container-test

# requirements.txt installs ./client (custodian-client) as a copy: reinstall when it changes.
$(BIN)/.installed: requirements.txt client/pyproject.toml $(wildcard client/custodian_client/*.py)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

# The TypeScript client's npm packages, exactly as its lock file says (tests/client_typescript
# installs them the same way when run on their own).
TS := clients/typescript
$(TS)/node_modules/.installed: $(TS)/package.json $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Regenerate the TypeScript client's types from the OpenAPI schema (under the embedded SQLite
# settings, whose schema the committed file is checked against).
typescript-schema: $(BIN)/.installed $(TS)/node_modules/.installed
	mkdir -p var
	env -u DATABASE_URL $(BIN)/python manage.py spectacular --validate --fail-on-warn --file var/openapi.yaml
	cd $(TS) && npx --no-install openapi-typescript ../../var/openapi.yaml --output src/schema.ts

# Web server, Celery executor worker and beat, on a demo tenant.
# Without DATABASE_URL / REDIS_URL: a SQLite file and a filesystem broker under var/.
run: $(BIN)/.installed
	mkdir -p var/broker/queue var/broker/processed
	$(BIN)/python manage.py preflight --wait $${CUSTODIAN_PREFLIGHT_WAIT:-0}
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	case "$$DATABASE_URL" in postgres*) $(BIN)/python manage.py setup_db_roles ;; esac
	bin/run-all

# ruff, import-linter, migrations check, pytest; then the browser tests in their
# own process, on tests/browser/ alone (headless Chromium from Debian's chromium package; the
# suite's conftest refuses a browser test anywhere else). Uses PostgreSQL
# and Redis when DATABASE_URL / REDIS_URL are set (CI sets both).
test: $(BIN)/.installed $(TS)/node_modules/.installed
	mkdir -p var/broker/queue var/broker/processed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest --create-db -m "not browser"
	DJANGO_ALLOW_ASYNC_UNSAFE=true $(BIN)/pytest -m browser tests/browser

# Long versions of the hostile-input and fault-injection suites (CI runs short ones).
fuzz: $(BIN)/.installed
	CUSTODIAN_FUZZ_EXAMPLES=500 $(BIN)/pytest -p no:cacheprovider tests/fuzz

faults: $(BIN)/.installed
	CUSTODIAN_FAULT_SCALE=full $(BIN)/pytest -p no:cacheprovider -s tests/faults

# The benchmark suite (bench/README.md): a fresh database `custodian_bench` on the local
# PostgreSQL, Redis db 13, gunicorn and Celery executor workers. BENCH_ARGS="--only recall" etc.
# The gateway part drives both servers with wrk (Debian's package): installed here if missing
# (as root), never by `make test`; without it the run stops with what to install.
bench: $(BIN)/.installed
	@command -v wrk >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y wrk >/dev/null && \
		command -v wrk >/dev/null; } || { echo "make bench needs wrk: sudo apt-get install -y wrk" >&2; exit 1; }
	$(BIN)/python -m bench --scale full $(BENCH_ARGS)

bench-smoke: $(BIN)/.installed
	$(BIN)/python -m bench --scale smoke --out var/bench-smoke $(BENCH_ARGS)

# The documentation site (mkdocs.yml, docs/), built strictly: a broken link or anchor fails it.
docs: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir var/site

# The container image (Containerfile, docs/operations.md "Container image"), with podman or
# docker (CONTAINER_ENGINE). BASE_IMAGE defaults to the registry's Debian; `make container-base`
# builds one offline from Debian's packages instead. CONTAINER_WHEELS=1 installs only from the
# wheels container-wheels builds here (for a build that cannot reach PyPI itself).
CONTAINER_ENGINE ?= $(shell command -v podman || command -v docker)
CONTAINER_IMAGE ?= localhost/custodian:latest
BASE_IMAGE ?= docker.io/library/debian:bookworm-slim
DEBIAN_MIRROR ?= http://deb.debian.org/debian
CONTAINER_BASE_CACHE ?= /var/cache/custodian-container
RUNTIME_REQUIREMENTS := sed -e '/^\# Tests and lint/,$$d' -e '/^\.\/client/d' requirements.txt

container-wheels: $(BIN)/.installed
	mkdir -p var
	$(RUNTIME_REQUIREMENTS) > var/runtime-requirements.txt
	$(BIN)/pip wheel --quiet --disable-pip-version-check --wheel-dir container/wheels \
		-r var/runtime-requirements.txt -r container/requirements-bookworm.txt wheel==0.45.1

# A Debian bookworm root file system from Debian's own packages (debootstrap, as root), imported
# as localhost/custodian-base:bookworm-minbase; the tarball is kept for the next import.
container-base:
	test -f $(CONTAINER_BASE_CACHE)/bookworm-minbase.tar || { \
		rm -rf $(CONTAINER_BASE_CACHE)/rootfs && mkdir -p $(CONTAINER_BASE_CACHE) && \
		debootstrap --variant=minbase bookworm $(CONTAINER_BASE_CACHE)/rootfs $(DEBIAN_MIRROR) && \
		rm -rf $(CONTAINER_BASE_CACHE)/rootfs/var/cache/apt/archives/*.deb $(CONTAINER_BASE_CACHE)/rootfs/var/lib/apt/lists/* && \
		tar -C $(CONTAINER_BASE_CACHE)/rootfs --numeric-owner -cf $(CONTAINER_BASE_CACHE)/bookworm-minbase.tar . && \
		rm -rf $(CONTAINER_BASE_CACHE)/rootfs; }
	$(CONTAINER_ENGINE) import --change 'CMD ["/bin/bash"]' $(CONTAINER_BASE_CACHE)/bookworm-minbase.tar \
		localhost/custodian-base:bookworm-minbase

# PostgreSQL and Redis images from Debian's packages on the same base, for compose.yaml without a
# registry: POSTGRES_IMAGE=localhost/custodian-postgres:15 REDIS_IMAGE=localhost/custodian-redis:7.
container-service-images:
	$(CONTAINER_ENGINE) build --build-arg BASE_IMAGE=$(BASE_IMAGE) -t localhost/custodian-postgres:15 \
		-f container/postgres.Containerfile container
	$(CONTAINER_ENGINE) build --build-arg BASE_IMAGE=$(BASE_IMAGE) -t localhost/custodian-redis:7 \
		-f container/redis.Containerfile container

container-image:
	$(CONTAINER_ENGINE) build --build-arg BASE_IMAGE=$(BASE_IMAGE) \
		$(if $(CONTAINER_WHEELS),--build-arg PIP_INSTALL_ARGS=--no-index) -t $(CONTAINER_IMAGE) -f Containerfile .

# Builds the image (or reuses the one tagged with this tree's content hash) and runs the README's
# walkthrough against its web and executor containers, on the local PostgreSQL and Redis
# (DATABASE_URL, REDIS_URL).
container-test: $(BIN)/.installed
	CUSTODIAN_CONTAINER_TESTS=1 CONTAINER_ENGINE=$(CONTAINER_ENGINE) BASE_IMAGE=$(BASE_IMAGE) \
		CUSTODIAN_CONTAINER_WHEELS=$(CONTAINER_WHEELS) $(BIN)/pytest -p no:cacheprovider -m container tests/container

lint: $(BIN)/.installed
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/lint-imports && $(BIN)/mypy

fmt: $(BIN)/.installed
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

clean:
	rm -rf var/ staticfiles/
