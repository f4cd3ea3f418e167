"""Which cell an nbval failure means: nbval's "Cell N" counts code cells only, from 0.

    python scripts/nbval_cell.py NOTEBOOK N

prints the cell's index among all cells (what JupyterLab and nbformat count), its id, and the
first line of its source. docs/instructors.md shows how to read the rest of an nbval failure.
"""
import json
import sys


def locate(path, number):
    """(index among all cells, cell id, first source line) of nbval's Cell `number`."""
    with open(path, encoding="utf-8") as handle:
        cells = json.load(handle)["cells"]
    code = [(index, cell) for index, cell in enumerate(cells) if cell.get("cell_type") == "code"]
    if not 0 <= number < len(code):
        raise ValueError(f"N: {path} has {len(code)} code cells, so nbval counts Cell 0 to Cell {len(code) - 1}")
    index, cell = code[number]
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    return index, cell.get("id"), (source.splitlines() or [""])[0]


def main(argv):
    if len(argv) != 2 or not argv[1].isdigit():
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        index, cell_id, first = locate(argv[0], int(argv[1]))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    print(f"nbval's Cell {argv[1]} is cell index {index}, id {cell_id}: {first}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
