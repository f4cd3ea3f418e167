"""The specification's ten tests, as the specification wrote them (workbook.specification.test_store),
run on this package's SQLite store. tests/store/test_backends.py runs them on every backend."""
from workbook.specification.test_store import StoreTests  # noqa: F401 (collected by pytest)
