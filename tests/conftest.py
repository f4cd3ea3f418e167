import sys
from pathlib import Path

# Lets tests import the spec's reference code (tests/spec_reference.py) by name.
sys.path.insert(0, str(Path(__file__).parent))
