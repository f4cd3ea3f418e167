"""make grade's verdicts, handed back through nbgrader's exchange (make hub-feedback).

make grade reads nbgrader's submitted/<student>/<chapter>/ as it is and writes grades.json. For
every student and chapter it graded that has a submission, this writes one page,
~instructor/course/feedback/<student>/<chapter>/<notebook>.html (named as the notebook submitted), beside the submission's
timestamp.txt and submission_secret.txt (as nbgrader's generate_feedback would), then runs
`nbgrader release_feedback <chapter>` as the instructor. nbgrader names each released page by a
hash of that submission's secret, so a student's Assignments tab fetches their own page and no
one else's. A submission folder without its timestamp.txt or submission_secret.txt (not made by
nbgrader submit) gets no page: the summary says which and why, and the rest are released.
"""
import html
import json
import os
import re
import shutil
from pathlib import Path

from course.hub.accounts import as_user

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}}
td,th{{border-bottom:1px solid #ccc;padding:.4em;text-align:left;vertical-align:top}}
table{{border-collapse:collapse}}</style></head>
<body><h1>{title}</h1>
<p class="score">Score: {points} of {maximum}</p>
<table><thead><tr><th>exercise</th><th>points</th><th>verdict</th></tr></thead><tbody>
{rows}
</tbody></table>
<p>Graded by make grade: your answer cells, run inside the chapter's own cells, judged by the
instructor's checks.</p>
</body></html>
"""


def page(student, chapter, marks):
    rows = "\n".join(
        f"<tr><td>Exercise {html.escape(m['exercise'])}</td><td>{m['points']} of {m['maximum']}</td>"
        f"<td>{html.escape(verdict(m))}</td></tr>" for m in marks)
    return PAGE.format(title=html.escape(f"{chapter}: feedback for {student}"), rows=rows,
                       points=sum(m["points"] for m in marks), maximum=sum(m["maximum"] for m in marks))


# A check's sentence tells the student what to run next in the notebook; a feedback page is read
# after the hand-in and runs nothing, so what it says to run again is left out.
RUN_AGAIN = re.compile(r"(?:,? run (?:that cell|it))?,? then (?:run )?this check again")


def for_the_page(sentence):
    if "Replace the ____" in sentence:  # the check's own sentence for a blank answer
        return "Your answer cell still held the ____ when you handed it in."
    return RUN_AGAIN.sub("", sentence)


def verdict(mark):
    sentence = for_the_page(mark["sentence"])
    if mark["status"] == "not attempted":
        return f"not attempted. {sentence}"
    return f"{mark['status']}: {sentence}"


NEEDS = ("timestamp.txt", "submission_secret.txt")  # what nbgrader submit writes and release_feedback reads


def write_pages(grades, course):
    """The feedback pages for every graded submission; return ([(student, chapter)] written,
    [(student, chapter, why)] skipped). A submission without what nbgrader's release_feedback
    needs (nbgrader submit did not make it) is skipped, and its old page, if any, removed."""
    data = json.loads((Path(grades) / "grades.json").read_text())
    course = Path(course)
    written, skipped = [], []
    for student in data["students"]:
        for chapter in data["chapters"]:
            submitted = course / "submitted" / student["student"] / chapter
            marks = [m for m in student["exercises"] if m["chapter"] == chapter]
            if not marks or not submitted.is_dir():
                continue
            out = course / "feedback" / student["student"] / chapter
            missing = [name for name in NEEDS if not (submitted / name).is_file()]
            if missing:
                shutil.rmtree(out, ignore_errors=True)  # else release_feedback would stop on it
                skipped.append((student["student"], chapter, missing))
                continue
            out.mkdir(parents=True, exist_ok=True)
            # nbgrader finds a student's page by the name of the notebook they submitted
            # (exchange.HAND_IN_PREFIX + the chapter's on the hub)
            named = sorted(p.stem for p in submitted.glob("*.ipynb")) or [chapter]
            (out / f"{named[0]}.html").write_text(page(student["student"], chapter, marks))
            for name in NEEDS:
                shutil.copy(submitted / name, out / name)
            written.append((student["student"], chapter))
    return written, skipped


def skipped_sentence(student, chapter, missing, course):
    return (f"Skipped {student}'s {chapter}: its folder in {Path(course) / 'submitted'} has no "
            f"{' and no '.join(missing)}, so nbgrader submit did not make it (ask {student} to "
            "submit again from the Assignments tab, then collect, grade and release feedback again).")


def release(settings, grades):
    """Write the pages and release them through the exchange, as the instructor; return a summary
    that names every submission skipped."""
    import pwd
    teacher = pwd.getpwnam(settings["instructor"])
    course = Path(settings["course"])
    written, skipped = write_pages(grades, course)
    for folder, dirs, files in os.walk(course / "feedback"):
        for name in [folder, *[os.path.join(folder, f) for f in dirs + files]]:
            os.chown(name, teacher.pw_uid, teacher.pw_gid, follow_symlinks=False)
    env = Path(settings["env"])
    run = dict(os.environ, LD_LIBRARY_PATH=settings["python_lib"],
               PATH=os.pathsep.join([str(env / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]))
    for chapter in sorted({chapter for _, chapter in written}):
        done = as_user(teacher, [str(env / "bin" / "nbgrader"), "release_feedback", chapter,
                                 "--CourseDirectory.root=" + str(course)],
                       environment=run, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nbgrader release_feedback {chapter} failed:\n{done.stdout}{done.stderr}")
    students = sorted({student for student, _ in written})
    lines = [f"Feedback released: {len(written)} pages for {len(students)} students "
             f"({', '.join(students) or 'none'}); each fetches their own from the Assignments tab."]
    lines += [skipped_sentence(student, chapter, missing, course) for student, chapter, missing in skipped]
    return "\n".join(lines)
