# A minimal JupyterHub for a class using pytorch-tutor: one Jupyter server per learner,
# the tutor behind jupyter-server-proxy at /user/NAME/tutor/, profiles in each learner's home.
# See deploy/jupyterhub/README.md. Run with:  jupyterhub -f deploy/jupyterhub/jupyterhub_config.py

c = get_config()  # noqa: F821 (JupyterHub provides it)

# Accounts: the machine's own users (PAM), each learner's server running as that user, so the
# tutor's profile (~/.local/share/pytorch-tutor) and workspace are theirs. Swap in the
# authenticator your institution uses (OAuthenticator, LDAPAuthenticator, ...).
c.JupyterHub.authenticator_class = "jupyterhub.auth.PAMAuthenticator"
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Authenticator.allowed_users = set()  # fill in the class list, or use allow_all / a group
c.Authenticator.admin_users = set()

# Land learners on the tutor rather than the Jupyter file browser. The server is
# registered by pytorch-tutor's `jupyter_serverproxy_servers` entry point (tutor/web/jupyter.py):
# serve-ui on a Unix socket in a directory only the learner can enter, with a per-server token
# the proxy adds to each request, so no other learner on this machine reaches a learner's tutor.
# It needs jupyter-server-proxy >= 4.1 in the learners' environment (pytorch-tutor[jupyterhub]).
c.Spawner.default_url = "/tutor/"

# One tutor process per tab plus its sandbox: about 270 MiB PSS per connected learner
# (benchmarks/bench_serve_ui.py). Cap each learner's server so one cannot starve the class
# (enforced by spawners that support it, e.g. SystemdSpawner or DockerSpawner).
c.Spawner.mem_limit = "2G"
c.Spawner.cpu_limit = 1.0

# Stop idle servers (and so their sandboxes) after an hour: pip install jupyterhub-idle-culler
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": ["python3", "-m", "jupyterhub_idle_culler", "--timeout=3600"],
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
