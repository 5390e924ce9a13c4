"""jupyter-server-proxy's hook: a learner's Jupyter server offers the tutor at ``/tutor/``.

Registered under the ``jupyter_serverproxy_servers`` entry point, so installing pytorch-tutor
in the single-user image is all it takes: the launcher tile appears, the proxy starts
``serve-ui`` on first visit and relays the page and its websocket (the page finds its
websocket relative to its own address, so the ``/user/NAME/`` prefix needs no configuration).
Each learner's server runs as that learner, so the profile lives in their home.

On a hub with system users, every learner can reach every loopback port on the machine, and
a tutor answers as the learner who runs it. So the proxy and the tutor meet on a Unix socket
in a directory only this learner can enter (``unix_socket: True``: jupyter-server-proxy makes
a 0700 temporary directory), and the tutor also wants its token: generated here, once per
Jupyter server, handed to ``serve-ui`` in its environment (not its command line, which ``ps``
shows to everyone) and added by the proxy to every request it relays. The hub's own login is
what stands before the proxy. Needs jupyter-server-proxy >= 4.1 and tornado >= 6.3
(``pip install 'pytorch-tutor[jupyterhub]'``). Nothing here imports jupyter-server-proxy: it
only calls this function.
"""

from __future__ import annotations

import sys

from tutor.web.access import TOKEN_ENV, TOKEN_HEADER, new_token


def setup_tutor() -> dict:
    token = new_token()
    return {
        "command": [sys.executable, "-m", "tutor", "serve-ui", "--unix-socket", "{unix_socket}"],
        "unix_socket": True,
        "environment": {TOKEN_ENV: token},
        "request_headers_override": {TOKEN_HEADER: token},
        "timeout": 120,  # the first start of the server is quick; each tab's sandbox warms in the app
        "absolute_url": False,  # serve-ui sees paths from "/", the proxy strips /user/NAME/tutor
        "launcher_entry": {"title": "PyTorch tutor", "enabled": True},
        "new_browser_tab": True,
    }
