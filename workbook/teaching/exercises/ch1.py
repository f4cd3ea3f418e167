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
    "1.3", "Write to_key(title): a key identity accepts, made of the title's words, that titles "
    "share only when their words are the same, as far as 32 characters allow.",
    InChecks("ch1", "check_to_key"),
    hints=["Lowercase the title, then re.findall(r\"[a-z0-9]+\", ...) lists its words: every other "
           "character, an accented letter too, only separates them. Join the words with \"-\".",
           "A key must start with a letter. When the joined words do not (a digit comes first, or "
           "there are no words at all), put \"n--\" in front: no title's words ever give two "
           "hyphens in a row, so no other title can reach that key. Then cut the key to 32 "
           "characters, and strip nothing after the cut: \"n--\" alone is the key of a title with "
           "no words."])
