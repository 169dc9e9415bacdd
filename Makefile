# Custodian: `make run` serves the demo, `make test` runs the full suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint fmt migrate clean fuzz faults bench bench-smoke docs typescript-schema

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
# own process (headless Chromium from Debian's chromium package). Uses PostgreSQL
# and Redis when DATABASE_URL / REDIS_URL are set (CI sets both).
test: $(BIN)/.installed $(TS)/node_modules/.installed
	mkdir -p var/broker/queue var/broker/processed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest --create-db -m "not browser"
	DJANGO_ALLOW_ASYNC_UNSAFE=true $(BIN)/pytest -m browser

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

lint: $(BIN)/.installed
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/lint-imports && $(BIN)/mypy

fmt: $(BIN)/.installed
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

clean:
	rm -rf var/ staticfiles/
