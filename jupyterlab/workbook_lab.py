"""The workbook's hook in the JupyterLab server of make lab and make author (tools/lab
installs this file into the venv and names it as FileContentsManager.pre_save_hook).

A saved notebook keeps each time explorer's still, not its live view. The explorer's output
carries both: the anywidget view (application/vnd.jupyter.widget-view+json) and a static
fallback (text, the HTML tables, the picture). The view names a model that only the kernel
that drew it holds, so in a reopened chapter it could only say "Error displaying widget:
model not found". JupyterLab's own way round that, saving every widget's state in the
notebook (the widget manager's saveState), marks the notebook unsaved as soon as it opens,
so closing it asked "Save your work?" when nothing had been done (issue 21, item 6). Without
the view the fallback shows; running the cell again brings the slider back.
"""

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def drop_widget_views(model, **kwargs):
    """FileContentsManager.pre_save_hook: a notebook is saved without widget views that have a
    fallback beside them (a view alone is kept), and without saved widget state."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    notebook = model["content"]
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data")
            if isinstance(data, dict) and WIDGET_VIEW in data and len(data) > 1:
                del data[WIDGET_VIEW]
    notebook.get("metadata", {}).pop("widgets", None)
