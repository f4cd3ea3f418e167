from workbook.validation import identity, integer


def forget(db, tenant, kind, key, expected):
    identity(tenant, kind, key)
    integer(expected, 1, 2**63-1, name="expected")
    cursor = db.execute("""DELETE FROM records
        WHERE tenant=? AND kind=? AND key=? AND revision=?""",
        (tenant, kind, key, expected))
    return cursor.rowcount == 1


def purge(db, tenant, now):
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10, name="now")
    cursor = db.execute(
        "DELETE FROM records WHERE tenant=? AND expires<=?",
        (tenant, now))
    return cursor.rowcount
