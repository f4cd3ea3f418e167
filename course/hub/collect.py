"""nbgrader's collect, refusing a submission that one student made in another's name.

nbgrader's exchange inbound/ is writable by every student, as nbgrader designs it, and a
submission is a folder named `<student>+<assignment>+<timestamp>+<random>`. Any student can make
one in another student's name with a later timestamp. nbgrader 0.9.6's collect compares the
folder's owner with the student id it names (its ExchangeCollect.check_owner, on by default), but
only warns ("...cheating attempt?") and collects it anyway, in place of the real latest
submission. A student could also hand in a symbolic link to a file only the instructor can read
(the course's source/, with the worked answers): collect runs as the instructor and copies what
the link points to.

OwnerCheckedCollect is nbgrader's own collect (nbgrader.exchange.default.ExchangeCollect),
configured with `c.ExchangeFactory.collect = "coursehub_collect.OwnerCheckedCollect"`, as nbgrader
is meant to be extended. make hub installs this file as the module `coursehub_collect` in the course
environment and sets that in the environment's nbgrader_config.py, so the formgrader's Collect and
`nbgrader collect` both use it. It skips every inbound submission that `refusal` refuses, with a
warning line in the log naming it (the formgrader shows the log under Collect), so that each
student's latest submission of their own is the one collected. With nbgrader's
`CollectApp.check_owner = False` (a shared exchange where every account is the same uid) only
links and special files are refused.

It relies on two hooks of nbgrader 0.9.6's ExchangeCollect, `_path_to_record` (one inbound
folder) and `_sort_by_timestamp` (one student's submissions, latest first): the course lock pins
nbgrader, and make test-hub collects a forged submission through the formgrader.
"""
import os
import stat

try:
    import pwd
except ImportError:  # Windows: nbgrader's exchange does not run there
    pwd = None


def owner_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def refusal(path, student, check_owner=True):
    """Why the inbound submission folder `path`, which names `student`, must not be collected, in
    one sentence that starts with what an instructor must know (who made it, in whose name) and
    ends with the folder's name, which is long; None when it may be. Never follows a link."""
    try:
        top = os.lstat(path)
    except OSError as error:
        return f"a submission could not be read ({error.strerror}): {path}."
    if not stat.S_ISDIR(top.st_mode):
        return f"a submission in {student}'s name is not a folder, so it is not collected: {os.path.basename(path)}."
    if check_owner and pwd is not None and owner_name(top.st_uid) != student:
        return (f"{owner_name(top.st_uid)} made a submission in {student}'s name, so it is not "
                f"collected ({student}'s own latest submission is, if there is one): "
                f"{os.path.basename(path)}.")
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            entry = os.path.join(folder, name)
            inside = os.lstat(entry)
            relative = os.path.relpath(entry, path)
            if not (stat.S_ISDIR(inside.st_mode) or stat.S_ISREG(inside.st_mode)):
                return (f"{student}'s submission holds {relative}, a link or a special file rather "
                        f"than a file, so it is not collected: {os.path.basename(path)}.")
            if check_owner and pwd is not None and inside.st_uid != top.st_uid:
                return (f"{student}'s submission holds {relative}, which belongs to "
                        f"{owner_name(inside.st_uid)}, so it is not collected: {os.path.basename(path)}.")
    return None


try:
    from nbgrader.exchange.default.collect import ExchangeCollect
except ImportError:  # make test's environment has no nbgrader; `refusal` is tested there
    ExchangeCollect = None

if ExchangeCollect is not None:
    class OwnerCheckedCollect(ExchangeCollect):
        """nbgrader's collect, skipping (with a warning line in the log) every inbound submission
        that `refusal` refuses, so that each student's own latest submission is collected."""

        def _path_to_record(self, path):
            record = super()._path_to_record(path)
            record["refused"] = refusal(path, record["username"], self.check_owner)
            if record["refused"]:
                # a warning: the collect itself succeeds (the formgrader's dialog says "Success")
                self.log.warning("Skipped: %s", record["refused"])
            return record

        def _sort_by_timestamp(self, records):
            # a student's own submissions only, latest first; a refused one is kept only when
            # there is nothing else, so that copy_files can drop it
            ordered = super()._sort_by_timestamp(records)
            return [r for r in ordered if not r["refused"]] or ordered

        def copy_files(self):
            self.src_records = [r for r in self.src_records if not r.get("refused")]
            return super().copy_files()
