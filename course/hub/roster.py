"""The course roster: a CSV file with one student a line, `username[,display name]`.

A first line `username,display name` (any case) is a header and is skipped, and so are blank
lines and lines starting with `#`. A username becomes a system account, so it must be a portable
Unix name (lower-case letters, digits, `_` and `-`, starting with a letter or `_`, at most 32
characters) and appear once. A display name is optional, at most 64 characters, and may hold
anything but `:` (the field separator of /etc/passwd, where the account's comment goes) and
control characters. Commas are accepted: a registrar's "Last, First" is the common form. The
account's comment field splits on commas (full name, room, phones), so there the display name is
written with each comma as a space (accounts.comment); the passwords file keeps it as written.
"""
import csv
import re
from dataclasses import dataclass
from pathlib import Path

USERNAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
FORBIDDEN = re.compile(r"[:\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Member:
    username: str
    display: str = ""


def check_username(name, where):
    if not USERNAME.fullmatch(name):
        raise ValueError(f"{where}: username {name!r} is not a portable Unix name (lower-case letters, "
                         "digits, _ and -, starting with a letter or _, at most 32 characters)")
    return name


def check_display(display, where):
    if FORBIDDEN.search(display) or len(display) > 64:
        raise ValueError(f"{where}: display name must be at most 64 characters, without : or "
                         "control characters")
    return display


def read_roster(path):
    """The members of the roster at `path`, in file order; ValueError names the line at fault."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"ROSTER: {path} is not a file")
    members, seen = [], {}
    with open(path, newline="", encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle), 1):
            where = f"{path.name}, line {number}"
            cells = [cell.strip() for cell in row]
            if not any(cells) or cells[0].startswith("#"):
                continue
            if number == 1 and cells[0].lower() == "username":
                continue
            if len(cells) > 2:
                raise ValueError(f"{where}: expected username and an optional display name, "
                                 f"found {len(cells)} fields")
            name = check_username(cells[0], where)
            display = check_display(cells[1] if len(cells) > 1 else "", where)
            if name in seen:
                raise ValueError(f"{where}: username {name!r} is already on line {seen[name]}")
            seen[name] = number
            members.append(Member(name, display))
    if not members:
        raise ValueError(f"ROSTER: {path} names no student")
    return members
