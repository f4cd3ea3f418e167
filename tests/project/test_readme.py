"""The README's examples run and print what the README says."""
import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_examples():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner()
    globs = {}
    for number, block in enumerate(blocks):
        test = parser.get_doctest(block, globs, f"README block {number}", str(README), 0)
        runner.run(test)
    attempted = runner.summarize(verbose=False)
    assert attempted.attempted >= 4
    assert attempted.failed == 0
