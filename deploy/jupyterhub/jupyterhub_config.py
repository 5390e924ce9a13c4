# A minimal JupyterHub for a class using pytorch-tutor: one Jupyter server per learner,
# the tutor behind jupyter-server-proxy at /user/NAME/tutor/, profiles in each learner's home.
# See deploy/jupyterhub/README.md. Run as root (PAM and LocalProcessSpawner start each learner's
# server as that learner), with the hub's own interpreter:
#   sudo /opt/hub/bin/jupyterhub -f deploy/jupyterhub/jupyterhub_config.py
import os
import sys

c = get_config()  # noqa: F821 (JupyterHub provides it)

# Accounts: the machine's own users (PAM), each learner's server running as that user, so the
# tutor's profile (~/.local/share/pytorch-tutor) and workspace are theirs. Swap in the
# authenticator your institution uses (OAuthenticator, LDAPAuthenticator, ...).
c.JupyterHub.authenticator_class = "jupyterhub.auth.PAMAuthenticator"
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Authenticator.allowed_users = set()  # fill in the class list, or use allow_all / a group
c.Authenticator.admin_users = set()  # the instructor's account: {"instructor"}

# The learners' servers run from the hub's environment, by absolute path: a hub started without
# that venv on PATH (sudo, systemd) otherwise fails every spawn with a 500 "No such file or
# directory: 'jupyterhub-singleuser'". The venv must be readable by every learner: not under a
# 0700 home (a learner then gets "Permission denied ... jupyterhub-singleuser").
c.Spawner.cmd = [os.path.join(os.path.dirname(sys.executable), "jupyterhub-singleuser")]

# Land learners on the tutor rather than the Jupyter file browser. The server is
# registered by pytorch-tutor's `jupyter_serverproxy_servers` entry point (tutor/web/jupyter.py):
# serve-ui on a Unix socket in a directory only the learner can enter, with a per-server token
# the proxy adds to each request, so no other learner on this machine reaches a learner's tutor.
# It needs jupyter-server-proxy >= 4.1 in the learners' environment (pytorch-tutor[jupyterhub]).
c.Spawner.default_url = "/tutor/"

# Memory and CPU caps per learner: LocalProcessSpawner ignores mem_limit and cpu_limit (a review
# measured one learner with 4 tabs at 3.4 GiB RSS under it). Use a spawner that enforces them
# (SystemdSpawner, DockerSpawner, KubeSpawner) and set them there, e.g.:
#   c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
#   c.Spawner.mem_limit = "2G"
#   c.Spawner.cpu_limit = 1.0

# Stop idle servers (and so their sandboxes) after an hour: pip install jupyterhub-idle-culler.
# The culler runs with the hub's own interpreter ("python3" may be another one, without it).
# An open tab pings its websocket every 15 s, which counts as activity: the tutor ends an
# untouched session itself (see README, "Idle tabs"), after which the culler can stop the server.
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600"],
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]

# The class now, for the instructor (who is stuck, at which drill, the misconceptions of the last
# hour), as a page at /services/class-now/ behind the hub's own login: the admin_users above may
# open it, a learner gets the hub's 403. It runs as the hub's user (root here) and reads each
# learner's profile read-only, as class-report does, again at each load (tutor/classroom/hub_service.py).
# For another course, add "--lessons", DIR (or "--course", ID) before "class".
c.JupyterHub.services.append({
    "name": "class-now",
    "url": "http://127.0.0.1:10101",
    "command": [sys.executable, "-m", "tutor", "class", "hub-service",
                "/home/*/.local/share/pytorch-tutor/profiles/default.sqlite"],
    "oauth_no_confirm": True,
})
