"""Chapter 4 exercises: a purge job with a text-free report, an honest forget, and a purge
prediction. Their checks: checks/ch4.py."""
from workbook.teaching.exercises import Exercise, InChecks

# Exercise 4.3: the operations whose aftermath the learner predicts.
PLAN = [  # time, operation, tenant, kind, key, ttl; put sends the current revision, forget too
    (100, "put", "orchard", "fact", "a", 20),
    (100, "put", "orchard", "checkpoint", "a", 10),
    (100, "put", "harbour", "fact", "a", 10),
    (100, "put", "orchard", "fact", "c", 18),
    (105, "put", "orchard", "fact", "b", 16),
    (110, "put", "harbour", "checkpoint", "b", 30),
    (112, "put", "orchard", "fact", "c", 10),
    (115, "forget", "harbour", "checkpoint", "b", None),
    (116, "put", "orchard", "checkpoint", "run", 4),
]
PLAN_COLUMNS = ["time", "operation", "tenant", "kind", "key", "ttl"]
PURGE_TENANT, PURGE_NOW = "orchard", 120


q1 = Exercise(
    "4.1", "Write purge_job(db, tenants, now): purge each tenant and return a text-free report.",
    InChecks("ch4", "check_purge_job"),
    hints=["Call purge once per tenant; it returns how many rows it removed.",
           "Build one dict per tenant from values you already hold (the operation name, now, the "
           "tenant, the count); never read a row to put it in the report."])

q2 = Exercise(
    "4.2", "Write forget_current(db, tenant, kind, key, now) that forgets the current revision honestly.",
    InChecks("ch4", "check_forget_current"),
    hints=["Read the record with get to learn its revision, then forget exactly that revision.",
           "forget already refuses when the revision has changed; return what it returns, and "
           "do not read again and retry."])

q3 = Exercise(
    "4.3", f"Predict the rows present after PLAN and purge({PURGE_TENANT!r}, {PURGE_NOW}).",
    InChecks("ch4", "check_prediction"),
    hints=["Each put sets the deadline to time + ttl; a later put on the same identity replaces it.",
           f"purge removes rows of {PURGE_TENANT} only, with deadline <= {PURGE_NOW}; a forgotten "
           "row is gone already; an expired row of another tenant is still present."])
