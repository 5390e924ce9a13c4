"""jupyter-server-proxy's hook: a learner's Jupyter server offers the tutor at ``/tutor/``.

Registered under the ``jupyter_serverproxy_servers`` entry point, so installing pytorch-tutor
in the single-user image is all it takes: the launcher tile appears, the proxy starts
``serve-ui`` on a free loopback port on first visit and relays the page and its websocket
(the page finds its websocket relative to its own address, so the ``/user/NAME/`` prefix
needs no configuration). Each learner's server runs as that learner, so the profile lives
in their home. Nothing here imports jupyter-server-proxy: it only calls this function.
"""

from __future__ import annotations

import sys


def setup_tutor() -> dict:
    return {
        "command": [sys.executable, "-m", "tutor", "serve-ui", "--host", "127.0.0.1", "--port", "{port}"],
        "timeout": 120,  # the first start of the server is quick; each tab's sandbox warms in the app
        "absolute_url": False,  # serve-ui sees paths from "/", the proxy strips /user/NAME/tutor
        "launcher_entry": {"title": "PyTorch tutor", "enabled": True},
        "new_browser_tab": True,
    }
