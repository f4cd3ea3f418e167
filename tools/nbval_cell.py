"""Read an nbval failure: which cell "Cell N" is, and both of its outputs in full.

    python tools/nbval_cell.py NOTEBOOK N

prints the cell's index among all cells (nbval's "Cell N" counts code cells only, from 0;
JupyterLab and nbformat count every cell), its id and the first line of its source, then runs
the notebook under nbval again. pytest's own options make that report whole: every line of the
stored output (Left) and of the output just computed (Right), none skipped.
docs/instructors.md shows a failure read this way.
"""
import json
import sys

# nbval asserts reference_output == test_output; pytest's "block" style prints each side whole.
NBVAL = ["--nbval", "--nbval-current-env", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "--color=no", "-o", "verbosity_assertions=2", "-o", "assertion_text_diff_style=block"]
SIDES = ("Where a cell's outputs differ, Left is the output stored in the notebook "
         "(nbval's reference) and Right the output the cell printed just now.")


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
    print(SIDES, flush=True)
    import pytest
    return int(pytest.main([argv[0], *NBVAL]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
