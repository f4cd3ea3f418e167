# Two commands do everything a learner needs:
#   make lab    set up .venv from the pins and open the learner's own copy (my-workbook/) in JupyterLab
#   make test   set up .venv from the pins and run every test (unit tests, then each chapter under nbval)
# Authors and instructors open the source chapters with: make author
# Both find a Python 3.12+ by themselves; PYTHON=/path/to/python3.12 overrides.

VENV := .venv
PY := $(VENV)/bin/python
LAB_PORT ?= 8888

# Let Python keep the bytecode of what it imports (in .venv and git-ignored __pycache__ folders).
# With PYTHONDONTWRITEBYTECODE=1, as on the machine the workbook is built on and in many CI
# images, every process compiled its imports again: make test took 71 s instead of 56 s, and
# each chapter's kernel paid the same again at start.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: lab lab-update author test venv export notebooks class student grade grade-demo test-nbgrader pins bench \
        bench-record bench-peers bench-setup bench-postgres bench-postgres-record hub hub-feedback test-hub bench-hub bench-hub-record

venv:
	@tools/venv

# The learner's copy, my-workbook/ (made the first time from the learner's edition, never
# overwritten), opened on chapter 1 with the workbook's JupyterLab settings (see tools/lab).
lab: venv
	tools/lab --port=$(LAB_PORT)

# Bring chapters that changed into my-workbook/, keeping the learner's answers.
lab-update: venv
	$(VENV)/bin/workbook-learner update

# The source chapters in notebooks/, for authors and instructors: what the tests hold to the spec.
author: venv
	tools/lab --author --port=$(LAB_PORT)

# make test's folders: the store, its PostgreSQL backend, the chapters, the editions, the course's
# parts that need no root or browser, and the project's set-up. The slow suites have folders and
# targets of their own: tests/grader (make test-grader), tests/hub (make test-hub), tests/nbgrader
# (make test-nbgrader), tests/tooling (make test-tooling), tests/browser and tests/a11y.
FAST_TESTS = tests/store tests/postgres tests/chapters tests/editions tests/course tests/project
# Unit tests first, then every chapter executed top to bottom in a fresh kernel of this
# environment, its outputs compared strictly with the stored ones (nbval). actionlint checks the
# workflows' shell steps with Debian's shellcheck, installed here when missing (where it cannot
# be, the rest still runs and the workflow test says what to install).
# Colour only on a terminal (conftest.py); COLOR=yes, or FORCE_COLOR=1, asks for it anyway.
COLOR = auto
# One worker more than there are cores: many tests wait on a server, a kernel or a child process,
# and a third worker on 2 cores cut make test from 83 s to 74 s here.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: venv
	@tools/apt-install shellcheck shellcheck || true
	$(PY) -m pytest -n $(WORKERS) --dist loadscope $(FAST_TESTS) notebooks --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --color=$(COLOR)

# The tooling around the workbook (tests/tooling/): make test's own command run on a small
# course laid out like this repository, as a CI log shows it (colour, whole differences,
# tools/nbval_cell.py), and every part of the benchmark (bench/) in miniature.
.PHONY: test-tooling
test-tooling: venv
	$(PY) -m pytest -n auto --dist loadscope tests/tooling -q -p no:cacheprovider

# Reliability (issue 5; figures in docs/reliability.md). soak: the unit tests again with bigger
# counts (WORKBOOK_SOAK=1: random histories, crash trials, concurrent writers, hostile input).
# mutate: mutmut 3 over the four store modules (settings in setup.cfg; works in mutants/, which
# git ignores), then the score and every surviving mutant.
.PHONY: soak mutate
# soak is make test itself, with WORKBOOK_SOAK=1 in its environment (the same tests, bigger counts).
soak: export WORKBOOK_SOAK = 1
soak: test

mutate: venv
	rm -rf mutants
	$(VENV)/bin/mutmut run
	tools/mutation-score

# The notebooks are the source of workbook/: write their `#| export` cells into the package.
export: venv
	PYTHON=$(PY) tools/export

# Re-execute every chapter and the appendix in place, refreshing the outputs nbval compares against.
notebooks: venv
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb
	$(PY) tools/clean_notebooks.py notebooks/*.ipynb

# The class release (docs/instructors.md): $(CLASS) is an nbgrader course folder (source/,
# nbgrader_config.py) and the hand-out edition (handout/) for classes without nbgrader. A course
# keeps it outside the clone (CLASS=~/teaching/memory): nbgrader's gradebook and the students'
# work live there, and a second make class replaces only what it wrote.
# make student is the same command under its old name.
TIMEOUT ?= 10
CLASS ?= build/class
class student: venv
	$(VENV)/bin/workbook-class $(CLASS) --timeout $(TIMEOUT)

# Grade a class: make grade SUBMISSION=class/ (one sub-folder or notebook per student, or
# nbgrader's submitted/). Writes $(GRADES)/gradebook.csv, feedback/<student>.txt and grades.json.
# TIMEOUT: seconds per cell; JOBS: chapters graded at once (default: the number of cores);
# CHAPTERS=01,02: only those chapters (default: all six). Student code runs in a sandbox, as far
# as the machine allows (root and Linux namespaces: fully); ISOLATION=required refuses to grade
# otherwise, ISOLATION=off turns it off. MEMORY: MiB per sandboxed process (default 1024).
# SEED: the checks' own cases of an earlier run (grades.json names it), to grade the same again.
GRADES ?= build/grades
ISOLATION ?= auto
grade: venv
	@test -n "$(SUBMISSION)" || { echo "usage: make grade SUBMISSION=path/to/class [TIMEOUT=10] [GRADES=build/grades] [CHAPTERS=01,02]" >&2; exit 2; }
	$(VENV)/bin/workbook-grade $(SUBMISSION) --out $(GRADES) --timeout $(TIMEOUT) $(if $(JOBS),--jobs $(JOBS)) $(if $(CHAPTERS),--chapters $(CHAPTERS)) --isolation $(ISOLATION) $(if $(MEMORY),--memory $(MEMORY)) $(if $(SEED),--seed $(SEED))

# The grader against a red team (tests/grader/red_team/): 43 determined students, every answer wrong and
# a trick each, graded with an honest class in one run; every cheater must score 0 and every
# honest student exactly what they earned (about two minutes; needs root and Linux namespaces).
.PHONY: test-grader
test-grader: venv
	$(PY) -m pytest -n auto --dist loadscope tests/grader -q

# Try the grader on a generated class: eight students (right, blank, partly wrong, an error cell,
# an endless loop, a loop that ignores the interrupt, one that floods its output, a tamperer)
# over all six chapters, into build/demo-class/ and build/demo-grades/.
grade-demo: venv
	rm -rf build/demo-class
	$(VENV)/bin/workbook-demo-class build/demo-class
	$(VENV)/bin/workbook-grade build/demo-class --out build/demo-grades --timeout $(TIMEOUT) $(if $(JOBS),--jobs $(JOBS))

# nbgrader 0.9.6 end to end, in its own venv (build/nbgrader-venv, every package from the lock
# course/requirements.txt): generate_assignment gives the hand-out, autograde and export award the
# same points as make grade on the same class (tests/nbgrader/; a few minutes). Also checks how
# nbval reports a failing cell, as docs/instructors.md says, and that two installs of the venv
# from empty caches give the same versions.
test-nbgrader: venv
	@tools/nbgrader-venv
	$(PY) -m pytest tests/nbgrader -q -p no:cacheprovider

# Re-resolve requirements.txt and the course lock course/requirements.txt from pyproject.toml's
# dependency lists (needs the package registry).
pins:
	@tools/pins

# Benchmarks (issue 7): overhead against raw SQL, growth to 100,000 rows, contention, chapter
# run times. Writes build/bench/report.md and bench.png and prints the table (about 2 minutes).
bench: venv
	$(PY) -m bench.run

# The same run, then kept as the record that the README, docs/benchmarks.md and the appendix
# notebook quote: docs/bench/ (report.md, results.json, bench.png). Re-execute the appendix
# afterwards (make notebooks) so its stored outputs show the new record.
bench-record: venv
	$(PY) -m bench.run --setup
	mkdir -p docs/bench
	cp build/bench/report.md build/bench/bench.png docs/bench/
	cp build/bench/results.json workbook/benchmarks/

# The PostgreSQL appendix's concurrency figures (issue 15): the same compare-and-swap workloads
# on the SQLite store and on a temporary PostgreSQL server, as ratios (about half a minute).
# Writes build/bench/postgres.json and postgres.md; bench-postgres-record keeps them in
# docs/bench/, which the appendix quotes (re-execute it afterwards).
bench-postgres: venv
	$(PY) -m bench.postgres

# make grade (isolated) against nbgrader's autograde on one generated class of 32 students x 6
# chapters, with the grader's peak memory (about 35 minutes): build/bench/grade.json and
# grade.md; bench-grade-record keeps them in docs/bench/, which the README quotes.
.PHONY: bench-grade bench-grade-record
bench-grade: venv
	$(PY) -m bench.grade

bench-grade-record: bench-grade
	mkdir -p docs/bench
	cp build/bench/grade.json build/bench/grade.md docs/bench/

bench-postgres-record: bench-postgres
	mkdir -p docs/bench
	cp build/bench/postgres.md docs/bench/
	cp build/bench/postgres.json workbook/benchmarks/

# What a new user waits for, each from a fresh clone (issue 12): to JupyterLab serving the
# learner's copy (target 20 s) and to a green make test (target 90 s), with empty package
# caches (WARM=1: this machine's). Writes build/bench/setup.json; about two minutes.
bench-setup: venv
	$(PY) -m bench.setup $(if $(WARM),--warm)

# Optional, not in CI: LangGraph's SqliteStore beside ours, from a scratch venv in build/.
PEERS := build/peers-venv
bench-peers: venv
	@test -x $(PEERS)/bin/python || $(PY) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet --disable-pip-version-check langgraph-checkpoint-sqlite
	$(PEERS)/bin/python -m bench.peers

# In the browser. test-browser: the real make lab in a temporary copy of the tree, its learner's
# copy driven by headless Chromium (installed by tools/install-browser if missing): every
# notebook runs with no error and every check "not attempted", typed answers get their verdicts,
# the copy survives a second make lab, a changed chapter and make lab-update, and make test's
# command reads nothing of it; screenshots in build/browser/ (about 3 minutes).
# html: the static edition, readable offline, in build/html/.
# A course on a real JupyterHub on this machine (docs/hub.md), as root: one account per ROSTER line
# and one for INSTRUCTOR, each student's learner's copy, nbgrader's exchange; prints the URL and
# how to log in, then runs until Ctrl+C. hub-feedback hands make grade's verdicts back through
# the exchange. test-hub: the course round trip in headless Chromium; bench-hub: 10 students at once.
HUB_DIR ?= /srv/agent-memory-hub
HUB_HOMES ?= /home
ROSTER ?= course/hub/files/roster.example.csv
INSTRUCTOR ?= instructor
HUB_IP ?= 127.0.0.1
HUB_PORT ?= 8000
HUB_OPTIONS = --dir $(HUB_DIR) --homes $(HUB_HOMES) --roster $(ROSTER) --instructor $(INSTRUCTOR) \
              --ip $(HUB_IP) --port $(HUB_PORT) --timeout $(TIMEOUT)
hub: venv
	@tools/install-node
	$(VENV)/bin/workbook-hub start $(HUB_OPTIONS)

hub-feedback: venv
	$(VENV)/bin/workbook-hub feedback --dir $(HUB_DIR) --grades $(GRADES)

test-hub: venv
	@tools/install-browser
	@tools/install-node
	$(PY) -m pytest tests/hub -q -rs -p no:cacheprovider

bench-hub: venv
	@tools/install-browser
	@tools/install-node
	$(PY) -m bench.hub

# The same, then kept in docs/bench/ (hub.json, hub.md), which the README quotes.
bench-hub-record: bench-hub
	mkdir -p docs/bench
	cp build/bench/hub.json build/bench/hub.md docs/bench/

.PHONY: test-browser html test-a11y hub hub-feedback test-hub bench-hub bench-hub-record
test-browser: venv
	@tools/install-browser
	$(PY) -m pytest tests/browser -q

# WCAG 2.0/2.1 A and AA (docs/instructors.md, "Accessibility"): axe-core from npm, pinned in
# tests/a11y/package-lock.json (tools/install-axe puts it in build/axe), in the same Chromium, on
# every page of the HTML edition (0 violations) and on what the learner's JupyterLab shows for
# chapter 5 (0 in the workbook's own outputs, widget and settings; JupyterLab's own are listed).
# Reports in build/a11y/ (a few minutes).
test-a11y: venv
	@tools/install-browser
	@tools/install-axe
	$(PY) -m pytest tests/a11y -q

html: venv
	$(VENV)/bin/workbook-html build/html
