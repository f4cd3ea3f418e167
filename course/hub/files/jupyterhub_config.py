# JupyterHub for a course on the agent memory workbook (make hub; docs/hub.md says how it works).
# make hub writes everything that differs between hubs (folders, ports, the roster) into
# HUB_DIR/state/settings.json and starts `jupyterhub -f course/hub/files/jupyterhub_config.py` with
# WORKBOOK_HUB_SETTINGS pointing at it; this file is the same for every course.
import json
import os

c = get_config()  # noqa: F821
settings = json.load(open(os.environ["WORKBOOK_HUB_SETTINGS"]))
state = settings["state"]

c.JupyterHub.bind_url = f"http://{settings['ip']}:{settings['port']}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(state, "proxy.pid")
c.JupyterHub.db_url = "sqlite:///" + os.path.join(state, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(state, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(state, "jupyterhub.pid")

# Who may log in: the roster's students and the instructor, each with their own password,
# checked by PAM against the system accounts make hub made. For a university login, replace the
# two PAM lines with OAuth or LTI (docs/hub.md, "Your university's login").
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = set(settings["students"]) | {settings["instructor"]}
c.Authenticator.admin_users = {settings["instructor"]}

# Each person's server runs as their own account, in their own home, with the course venv:
# course/hub/files/start-server first brings their learner's copy (~/workbook) up to date, keeping answers.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [os.path.join(settings["tools"], "start-server")]
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = f"/lab/tree/workbook/{settings['first_chapter']}"
c.Spawner.env_keep = ["LANG", "LC_ALL"]
c.Spawner.environment = {
    "PATH": os.pathsep.join([os.path.join(settings["env"], "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
    "LD_LIBRARY_PATH": settings["python_lib"],
    "WORKBOOK_HUB_ENV": settings["env"],
    "WORKBOOK_EDITION": settings["edition"],
    "WORKBOOK_HIDE_SOLUTIONS": "1",
}
# A 2-core machine starting many servers at once needs longer than the default 60 s and 30 s.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
