"""One system account per student, and one for the instructor, each with a private home.

make hub makes the accounts it needs when it runs as root, and never touches an account it did
not make: every account it makes carries MARK in its comment field, and a roster name that
already belongs to another account is refused. JupyterHub's PAM login then checks each person's
own password. A new account gets a first password of its own, written to PASSWORDS in the
instructor's home, which only the instructor (and root) can read; an account made by an earlier
make hub keeps the password it has.
"""
import csv
import io
import os
import pwd
import re
import secrets
import subprocess
from pathlib import Path

MARK = "agent-memory-workbook hub"
PASSWORDS = "hub-passwords.csv"
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read aloud or copied by hand


class NeedsRoot(RuntimeError):
    """make hub was not run as root, so it cannot make accounts or start servers as them."""


def require_root(what="make hub"):
    if os.geteuid() != 0:
        raise NeedsRoot(
            f"{what} needs root: it makes one system account per student (useradd) and JupyterHub "
            "starts each student's server as that account. Run it as root (sudo make hub), or "
            "follow docs/hub.md, 'Without root', for a hub whose accounts already exist.")


def first_password():
    return "-".join("".join(secrets.choice(ALPHABET) for _ in range(4)) for _ in range(3))


def account(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def made_here(entry):
    return entry.pw_gecos.split(",")[-1] == MARK


def comment(display, name):
    """The account's comment field: the display name as its full name (each comma a space, since
    the field's parts are separated by commas), then MARK as its last part."""
    full = " ".join(filter(None, re.split(r"\s*,\s*", display.strip()))) or name
    return f"{full},,,{MARK}"


def ensure_account(name, display, homes):
    """Make the account if it is missing; return (pwd entry, True when made now).

    ValueError when the name belongs to an account make hub did not make.
    """
    entry = account(name)
    if entry is not None:
        if not made_here(entry):
            raise ValueError(f"username {name!r} already belongs to an account on this machine that "
                             "make hub did not make; give the student another username in the roster")
        made = False
    else:
        home = Path(homes) / name
        subprocess.run(["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/bash",
                        "--user-group", "--comment", comment(display, name), name],
                       check=True, capture_output=True, text=True)
        entry, made = pwd.getpwnam(name), True
    # Private: nobody else may list or read it, whatever the system's HOME_MODE.
    os.chmod(entry.pw_dir, 0o700)
    return entry, made


def set_password(name, password):
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", check=True, capture_output=True, text=True)


def remove_account(name):
    """Remove an account that make hub made, with its home (the tests' clean-up)."""
    entry = account(name)
    if entry is None or not made_here(entry):
        return False
    subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
    subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
    return True


def read_passwords(path):
    if not path.exists():
        return {}
    return {row["username"]: row for row in csv.DictReader(io.StringIO(path.read_text()))}


def write_passwords(path, rows, owner):
    """Write the first passwords, readable by `owner` (the instructor) alone."""
    text = io.StringIO()
    writer = csv.DictWriter(text, ["username", "display name", "first password"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    fresh = path.with_name(path.name + ".new")
    fresh.unlink(missing_ok=True)
    descriptor = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text.getvalue())
    os.chown(fresh, owner.pw_uid, owner.pw_gid)
    os.replace(fresh, path)


def ensure_accounts(members, instructor, homes):
    """Every member's account and the instructor's; return (the instructor's entry, the password
    file's rows, the usernames given a first password now). Only accounts made now get one."""
    require_root()
    teacher, teacher_made = ensure_account(instructor, "instructor", homes)
    path = Path(teacher.pw_dir) / PASSWORDS
    known = read_passwords(path)
    rows, given = [], []
    for name, display in [(m.username, m.display) for m in members] + [(instructor, "instructor")]:
        made = teacher_made if name == instructor else ensure_account(name, display, homes)[1]
        if made:
            password = first_password()
            set_password(name, password)
            known[name] = {"username": name, "display name": display, "first password": password}
            given.append(name)
        elif name not in known:  # made by an earlier make hub whose password file is gone
            known[name] = {"username": name, "display name": display,
                           "first password": "(set by an earlier make hub; unchanged)"}
        rows.append(known[name])
    write_passwords(path, rows, teacher)
    return teacher, rows, given


def as_user(entry, argv, environment=None, **options):
    """Run argv as the account `entry` (its uid, gid and groups, in its home), never as root:
    what is written in a home is written by its owner."""
    def demote():
        os.setgroups(os.getgrouplist(entry.pw_name, entry.pw_gid))
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    environment = dict(environment or os.environ, HOME=entry.pw_dir, USER=entry.pw_name,
                       LOGNAME=entry.pw_name)
    return subprocess.run(argv, preexec_fn=demote, env=environment, cwd=entry.pw_dir, **options)
