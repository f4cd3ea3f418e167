# Two commands do everything a learner needs:
#   make lab    set up .venv from the pins and open the workbook in JupyterLab
#   make test   set up .venv from the pins and run every test (unit tests, then each chapter under nbval)
# Both find a Python 3.12+ by themselves; PYTHON=/path/to/python3.12 overrides.

VENV := .venv
PY := $(VENV)/bin/python
LAB_PORT ?= 8888

.PHONY: lab test venv export notebooks student pins

venv:
	@scripts/venv

lab: venv
	$(VENV)/bin/jupyter lab --allow-root --port=$(LAB_PORT) notebooks

# Unit tests first, then every chapter executed top to bottom in a fresh kernel of this
# environment, its outputs compared strictly with the stored ones (nbval).
test: venv
	$(PY) -m pytest tests notebooks --nbval --nbval-current-env

# The notebooks are the source of workbook/: write their `#| export` cells into the package.
export: venv
	$(VENV)/bin/nbdev-export

# Re-execute every chapter in place, refreshing the outputs nbval compares against.
notebooks: venv
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace notebooks/0*.ipynb

# The student edition for a class: solutions replaced by stubs, outputs cleared (no nbgrader needed).
student: venv
	$(PY) scripts/student.py build/student

# Re-resolve requirements.txt from pyproject.toml's dependency lists (needs the package registry).
pins:
	@scripts/pins
