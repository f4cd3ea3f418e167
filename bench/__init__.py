"""`make bench`: the store's overhead, growth, contention and workbook timings (issue 7).

Every figure the report judges is a ratio or a curve measured within one run, so a
slow or noisy machine changes the absolute numbers but not the verdict.
"""
