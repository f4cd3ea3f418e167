"""Chapter 1 exercises: payload limits and identity names. Their checks: checks/ch1.py."""
from workbook.teaching.exercises import Exercise, InChecks

q1 = Exercise(
    "1.1", "Write a fact that payload rejects for its size alone, with as few characters in "
    "text and source as possible.", InChecks("ch1", "check_wide_fact"),
    hints=["The limit is on json.dumps(value, sort_keys=True, ensure_ascii=True), in bytes: find "
           "the character that costs the most bytes there (the table above measures a few).",
           "An emoji costs 12 bytes; measure the JSON of the fact with empty text and source, and "
           "work out how many 12-byte characters push it past 2,048."])

q2 = Exercise(
    "1.2", "Write the longest eight-item checkpoint that payload accepts.", InChecks("ch1", "check_full_checkpoint"),
    hints=["Measure the JSON of an eight-item checkpoint whose items are all empty strings, "
           "with ENCODE (payload itself refuses empty items, but their JSON is what you need).",
           "Whatever is left of the 2,048 bytes, shared by eight items, is each item's length: "
           "a letter or a digit costs one byte."])

q3 = Exercise(
    "1.3", "Write to_key(title) that turns any title into a valid key.", InChecks("ch1", "check_to_key"),
    hints=["Lowercase the title first, then replace each run of characters other than a-z "
           "and 0-9 by a single hyphen: one call of re.sub with a + in its pattern.",
           "After the replacing, trim the hyphens left at the ends (titles that differ only in "
           "punctuation share a key), then meet the rules of a key: a letter first (add a short "
           "prefix when there is none) and at most 32 characters."])
