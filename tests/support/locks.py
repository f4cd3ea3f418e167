"""Read a requirements file of exact pins (requirements.txt, course/requirements.txt)."""
import re
from pathlib import Path

LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)(\s*;.*)?")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path):
    """name -> version of every pin in a requirements file; ValueError for a line that is no pin."""
    found = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = LINE.fullmatch(line.strip())
        if not match:
            raise ValueError(f"{Path(path).name}, line {number}: not an exact pin: {line!r}")
        found[canonical(match[1])] = match[2]
    return found
