"""axe-core in a Playwright page: the WCAG 2.0 and 2.1 A and AA rules, and a readable summary.

axe-core comes from npm, pinned exactly in tests/a11y/package-lock.json and installed into build/axe
by tools/install-axe (make test-a11y runs it first).
"""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "build" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
REPORTS = ROOT / "build" / "a11y"


def run_axe(page, include=None):
    """axe's result for the page (or the elements ``include`` selects), only the rules that
    carry the WCAG 2.0/2.1 A and AA tags."""
    if not AXE.is_file():
        raise FileNotFoundError(f"{AXE} is missing: run tools/install-axe (make test-a11y does)")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async ([include, tags]) => {
            const context = include ? {include: [include]} : document;
            const result = await axe.run(context, {runOnly: {type: "tag", values: tags},
                                                   resultTypes: ["violations"]});
            return {version: axe.version, violations: result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help, tags: v.tags,
                nodes: v.nodes.map(n => ({target: n.target, html: n.html.slice(0, 300),
                                          summary: n.failureSummary}))}))};
        }""", [include, TAGS])


def count(result):
    """Elements in violation, summed over the rules."""
    return sum(len(v["nodes"]) for v in result["violations"])


def summary(result):
    """{rule id: elements in violation}."""
    return {v["id"]: len(v["nodes"]) for v in result["violations"]}


def save(name, report):
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"{name}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
