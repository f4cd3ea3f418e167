# The agent memory workbook. `make help` lists every target by who it is for.
# A learner needs two: `make lab` (JupyterLab on your own copy, my-workbook/) and `make test`.
# Every target sets up .venv from the one pin file first (tools/venv: a Python 3.12+ found by
# itself; PYTHON=/path/to/python3.12 overrides).

VENV := .venv
PY := $(VENV)/bin/python
LAB_PORT ?= 8888
TIMEOUT ?= 10

# Let Python keep the bytecode of what it imports (in .venv and git-ignored __pycache__ folders).
# With PYTHONDONTWRITEBYTECODE=1, as on the machine the workbook is built on and in many CI
# images, every process compiled its imports again: make test took 71 s instead of 56 s, and
# each chapter's kernel paid the same again at start.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help venv lab lab-update author export notebooks html test checks test-tooling test-grader \
        test-postgres test-browser test-a11y test-hub test-nbgrader soak mutate class student grade grade-demo \
        hub hub-stop hub-status hub-servers hub-feedback hub-teardown pins bench bench-record \
        reliability-record

help: ## Show every target, by who it is for.
	@awk 'BEGIN { FS = ":.*## " } /^## / { printf "\n%s\n", substr($$0, 4) } \
	     /^[a-z0-9-]+:.*## / { printf "  make %-19s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

## For a learner
lab: venv ## JupyterLab on your own copy of the chapters, my-workbook/ (made the first time, never overwritten).
	tools/lab --port=$(LAB_PORT)

lab-update: venv ## Bring chapters that changed into my-workbook/, keeping your answers.
	$(VENV)/bin/workbook-learner update

## Checks (CI runs make checks: make test and the slow suites; soak and mutate are for when you have the time)
# make test's folders: the store, the chapters, the editions, the course's parts that need no root
# or browser, and the package installed on its own; then every chapter executed top to bottom in a
# fresh kernel, its outputs compared strictly with the stored ones (nbval). Whatever concerns
# PostgreSQL (tests/postgres, the store tests' [postgres] half, the PostgreSQL exercises and
# appendices: every test whose name, file or folder says postgres) is make test-postgres: the same
# folders, the other half, so every test runs in exactly one of the two. The slow suites have
# folders and targets of their own. actionlint checks the workflows' shell steps with Debian's
# shellcheck, installed here when missing (where it cannot be, the rest still runs and the
# workflow test says what to install). Colour only on a terminal (conftest.py); COLOR=yes, or
# FORCE_COLOR=1, asks for it anyway.
FAST_TESTS = tests/store tests/postgres tests/chapters tests/editions tests/course tests/project notebooks
NBVAL = --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg
COLOR = auto
# One worker more than there are cores: many tests wait on a server, a kernel or a child process.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: venv ## Every fast test on SQLite, then each chapter executed under strict nbval.
	@tools/apt-install shellcheck shellcheck || true
	$(PY) -m pytest -n $(WORKERS) --dist loadscope $(FAST_TESTS) $(NBVAL) -k "not postgres" --color=$(COLOR)

test-postgres: venv ## The store on PostgreSQL: every store test on a temporary server, its attacks, crash trials and appendices.
	$(PY) -m pytest -n $(WORKERS) --dist loadscope $(FAST_TESTS) $(NBVAL) -k postgres --color=$(COLOR)

test-tooling: venv ## make test's own output as a CI log shows it, and the benchmarks in miniature.
	$(PY) -m pytest -n auto --dist loadscope tests/tooling -q -p no:cacheprovider

test-grader: venv ## The grader against its red team and an honest class (root and namespaces).
	$(PY) -m pytest -n auto --dist loadscope tests/grader -q

test-browser: venv ## The learner's copy worked through in headless Chromium (screenshots in build/browser/).
	@tools/install-browser
	$(PY) -m pytest tests/browser -q -n 2 --dist loadfile

test-a11y: venv ## The HTML edition offline and for a screen reader; WCAG 2.1 AA: axe-core on it and on chapter 5 in JupyterLab.
	@tools/install-browser
	@tools/install-axe
	$(PY) -m pytest tests/a11y -q -n 2 --dist loadfile

# --dist loadfile: test_hub.py (one course, in order) on one worker, the other files beside it.
# Not loadgroup: with pytest 9.2 it ignores xdist_group and deals out single tests
# (pytest-xdist issue 1386), which split the course over two hubs.
test-hub: venv ## A course round trip on a real JupyterHub, in headless Chromium (root).
	@tools/install-browser
	@tools/install-node
	$(PY) -m pytest tests/hub -q -rs -p no:cacheprovider -n 2 --dist loadfile

# --dist loadfile: the lock's fresh installs (mostly downloads) beside the class being graded.
test-nbgrader: venv ## nbgrader's own autograde awards what make grade awards (build/nbgrader-venv).
	@tools/nbgrader-venv
	$(PY) -m pytest tests/nbgrader -q -p no:cacheprovider -n 2 --dist loadfile

# What CI runs: make test and the slow suites, two at a time, each starting as a slot frees:
# alone, each leaves a core idle part of the time (servers starting, kernels and browsers
# waiting). make test first, beside the longest suite, so that a broken store or chapter shows
# within minutes; then the longest first, so that what is left to run alone at the end is short.
# make keeps each one's output together and prints it when it ends; a failed one stops the ones
# not yet started.
CHECKS = test test-hub test-browser test-nbgrader test-a11y test-grader test-postgres test-tooling
checks: venv ## make test and every slow suite above, two at a time, each one's output whole when it ends: what CI runs.
	@echo "Running $(CHECKS), two at a time: each one's output shows when it ends."
	@$(MAKE) --no-print-directory -j2 --output-sync=target $(CHECKS)
	@echo "make checks: all $(words $(CHECKS)) passed ($(CHECKS))."

soak: export WORKBOOK_SOAK = 1
soak: test test-postgres ## make test and make test-postgres with bigger counts: histories, crash trials, writers, hostile input.

mutate: venv ## mutmut over the four store modules, then the score and every survivor.
	rm -rf mutants
	$(VENV)/bin/mutmut run
	tools/mutation-score

## For an author
author: venv ## JupyterLab on the source chapters in notebooks/, answers included.
	tools/lab --author --port=$(LAB_PORT)

export: venv ## Write the chapters' #| export cells into workbook/, and the worked answers.
	PYTHON=$(PY) tools/export

notebooks: venv ## Re-execute every chapter and appendix in place (the outputs nbval compares).
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb
	$(PY) tools/clean_notebooks.py notebooks/*.ipynb

html: venv ## The static HTML edition, readable offline, in build/html/.
	$(VENV)/bin/workbook-html build/html

## For an instructor (docs/instructors.md, docs/hub.md)
# CLASS is an nbgrader course folder; keep it outside the clone (CLASS=~/teaching/memory).
CLASS ?= build/class
class: venv ## The class release: an nbgrader course folder and a hand-out, in CLASS.
	$(VENV)/bin/workbook-class $(CLASS) --timeout $(TIMEOUT)

student: class # the same, under its old name

# SUBMISSION: one sub-folder or notebook per student, or nbgrader's submitted/. TIMEOUT: seconds
# per cell; JOBS: chapters at once (default: the cores); CHAPTERS=01,02; ISOLATION=auto|required|off;
# MEMORY: MiB a student's chapter's processes hold together; SEED: the checks' cases of an earlier
# run (grades.json); DUE: the due date ("2026-03-02 17:00", UTC unless a zone follows, or
# "01=...;02=..."), against nbgrader's timestamp.txt; LATE=none|zero: what late work earns.
GRADES ?= build/grades
ISOLATION ?= auto
grade: venv ## Grade SUBMISSION into GRADES: gradebook.csv, feedback/ and grades.json.
	@test -n "$(SUBMISSION)" || { echo "usage: make grade SUBMISSION=path/to/class [TIMEOUT=10] [GRADES=build/grades] [CHAPTERS=01,02]" >&2; exit 2; }
	$(VENV)/bin/workbook-grade $(SUBMISSION) --out $(GRADES) --timeout $(TIMEOUT) $(if $(JOBS),--jobs $(JOBS)) $(if $(CHAPTERS),--chapters $(CHAPTERS)) --isolation $(ISOLATION) $(if $(MEMORY),--memory $(MEMORY)) $(if $(SEED),--seed $(SEED)) $(if $(DUE),--due '$(DUE)') $(if $(LATE),--late $(LATE))

grade-demo: venv ## Grade a generated class of eight kinds of student (build/demo-grades/).
	rm -rf build/demo-class
	$(VENV)/bin/workbook-demo-class build/demo-class
	$(VENV)/bin/workbook-grade build/demo-class --out build/demo-grades --timeout $(TIMEOUT) $(if $(JOBS),--jobs $(JOBS))

HUB_DIR ?= /srv/agent-memory-hub
# Left out, HUB_HOMES, ROSTER, INSTRUCTOR, HUB_IP, HUB_PORT, HUB_IDLE and TIMEOUT are what HUB_DIR's
# course already has (HUB_DIR/state/settings.json), else /home, course/hub/files/roster.example.csv,
# instructor, 127.0.0.1, 8000, 3600 and 10. HUB_IDLE: seconds before the idle culler stops a server
# nobody uses. ACCEPT_READABLE: paths (or all) where students may read worked answers, which make
# hub otherwise refuses to start beside (HUB_DIR remembers them; none forgets them); SCAN_SECONDS
# bounds that search. KEEP: where make hub-teardown copies the gradebook and GRADES first.
SCAN_SECONDS ?= 120
HUB_OPTIONS = --dir $(HUB_DIR) $(if $(HUB_HOMES),--homes $(HUB_HOMES)) $(if $(ROSTER),--roster $(ROSTER)) \
              $(if $(INSTRUCTOR),--instructor $(INSTRUCTOR)) $(if $(HUB_IP),--ip $(HUB_IP)) \
              $(if $(HUB_PORT),--port $(HUB_PORT)) $(if $(filter-out file,$(origin TIMEOUT)),--timeout $(TIMEOUT)) \
              $(if $(HUB_IDLE),--idle $(HUB_IDLE)) \
              --scan-seconds $(SCAN_SECONDS) $(if $(ACCEPT_READABLE),--accept-readable $(ACCEPT_READABLE))
hub: venv ## Check, set up and start (or restart) a course on JupyterHub, one account per ROSTER line (root).
	@tools/install-node
	$(VENV)/bin/workbook-hub start $(HUB_OPTIONS)

hub-stop: venv ## Stop the course hub, every student's server and kernel, and its proxy.
	$(VENV)/bin/workbook-hub stop --dir $(HUB_DIR)

hub-status: venv ## What of the course hub runs: the hub, the proxy, whose servers.
	@$(VENV)/bin/workbook-hub status --dir $(HUB_DIR)

hub-servers: venv ## Start every student's server ahead of a lecture (AT_ONCE at a time).
	$(VENV)/bin/workbook-hub servers --dir $(HUB_DIR) $(if $(AT_ONCE),--at-once $(AT_ONCE))

hub-feedback: venv ## Hand make grade's verdicts back to the students through nbgrader's exchange.
	$(VENV)/bin/workbook-hub feedback --dir $(HUB_DIR) --grades $(GRADES)

hub-teardown: venv ## End of term: remove the course's accounts, homes and HUB_DIR, after asking (KEEP=DIR keeps the gradebook).
	$(VENV)/bin/workbook-hub teardown --dir $(HUB_DIR) $(if $(KEEP),--keep $(KEEP)) --grades $(abspath $(GRADES)) \
	  $(if $(YES),--yes)

## Maintenance
venv: ## Set up .venv from requirements.txt (every other target does this first).
	@tools/venv

pins: ## Re-resolve requirements.txt and course/requirements.txt (needs the package registry).
	@tools/pins

# WHAT: store (about 2 minutes), postgres (half a minute), grade (make grade against nbgrader,
# long), hub (students logging in at once, root), setup (fresh clones), peers (LangGraph's store,
# in build/peers-venv). ARGS= passes options to it (ARGS=--quick, ARGS="--students 8").
WHAT ?= store
PEERS := build/peers-venv
bench: venv ## One benchmark, WHAT=store|postgres|grade|hub|setup|peers, into build/bench/.
ifeq ($(WHAT),peers)
	@test -x $(PEERS)/bin/python || $(PY) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet --disable-pip-version-check langgraph-checkpoint-sqlite
	$(PEERS)/bin/python -m bench.peers $(ARGS)
else
	$(if $(filter hub,$(WHAT)),@tools/install-browser && tools/install-node)
	$(PY) -m bench $(WHAT) $(ARGS)
endif

bench-record: venv ## The same, kept as the record in docs/bench/ (and workbook/benchmarks/).
	$(if $(filter hub,$(WHAT)),@tools/install-browser && tools/install-node)
	$(PY) -m bench $(WHAT) --record $(ARGS)

# RUN: test (make test once: the reliability figures its end prints, its tests, its time), soak
# (make soak), mutate (make mutate's score), loaded (make test from TIMES fresh clones while two
# busy loops keep the cores busy) or ci (.ci/run's commands from a fresh clone: each one's time
# and CPU time). docs/reliability/figures.md is rendered from every record.
RUN ?= test
TIMES ?= 10
reliability-record: venv ## A check's figures, RUN=test|postgres|soak|mutate|loaded|ci, kept as the record in docs/reliability/.
	$(PY) tools/reliability.py $(RUN) $(if $(filter loaded,$(RUN)),$(TIMES))
