# JupyterHub for a course on the agent memory workbook (make hub; docs/hub.md says how it works).
# make hub writes everything that differs between hubs (folders, ports, the roster) into
# HUB_DIR/state/settings.json and starts `jupyterhub -f course/hub/files/jupyterhub_config.py` with
# WORKBOOK_HUB_SETTINGS pointing at it; this file is the same for every course.
import json
import os

c = get_config()  # noqa: F821
settings = json.load(open(os.environ["WORKBOOK_HUB_SETTINGS"]))
state = settings["state"]


def secret(name):
    with open(os.path.join(state, name)) as handle:
        return handle.read().strip()


c.JupyterHub.bind_url = f"http://{settings['ip']}:{settings['port']}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.JupyterHub.db_url = "sqlite:///" + os.path.join(state, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(state, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(state, "jupyterhub.pid")

# A restart of the hub (make hub again: a new student, a changed setting, or after a crash) stops
# nobody's work. The proxy runs on its own, started by make hub (course/hub/service.py), and keeps
# its routes to the servers; the servers and their kernels outlive the hub, which takes them up
# again from its database. make hub-stop stops everything on purpose. (JupyterHub's "Running
# proxy separately from the hub".)
c.JupyterHub.cleanup_servers = False
c.ConfigurableHTTPProxy.should_start = False
c.ConfigurableHTTPProxy.auth_token = secret("proxy_token")
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"

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

# Two services with the hub's API: make hub's own (make hub-servers starts the class's servers
# ahead of a lecture with it), and JupyterHub's idle culler, which stops a server nobody has used
# for settings["idle"] seconds, so that a term's worth of servers does not hold the memory.
python = os.path.join(settings["env"], "bin", "python")
c.JupyterHub.services = [
    {"name": "course", "api_token": secret("api_token")},
    {"name": "idle-culler", "command": [python, "-m", "jupyterhub_idle_culler", f"--timeout={settings['idle']}",
                                        "--cull-every=60"],
     "environment": {"LD_LIBRARY_PATH": settings["python_lib"]}},
]
c.JupyterHub.load_roles = [
    {"name": "course", "services": ["course"],
     "scopes": ["list:users", "read:users", "read:servers", "servers", "admin:server_state"]},
    {"name": "idle-culler", "services": ["idle-culler"],
     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]},
]
