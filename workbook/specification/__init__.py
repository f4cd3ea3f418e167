"""The specification's own code, carried with the package so that the chapters and the tests can
compare against it wherever the package is installed:

    store       the specification's reference store.py, verbatim
    test_store  the specification's ten tests, verbatim but for their imports (this package's
                workbook.store and workbook.demo instead of the spec's store.py and demo.py)
"""
