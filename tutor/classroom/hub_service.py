"""The live view as a JupyterHub service: the hub signs the instructor in, the page reads the learners' profiles.

Run by the hub as a managed service (``deploy/jupyterhub/jupyterhub_config.py``) at
``/services/class-now/``; JupyterHub hands it its address, prefix and API token in the
environment. Every request goes through the hub's OAuth (``HubOAuthenticated``): only an account
the hub granted ``access:services!service=class-now`` (the config's instructor role; learners are
not given it) sees the page, and a learner who knows the address gets the hub's 403. The page is
``page.live_page``, the same rules as ``class watch``, read again at each load from the files the
patterns name (expanded at each load, so a learner who logs in later appears): each file is read
as ``class-report`` reads it (``sources.py``: untrusted, read-only, no link followed at the file).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from urllib.parse import urlparse

from tutor.classroom.live import class_now
from tutor.classroom.page import live_page
from tutor.classroom.watch import MAX_PROFILES, profiles_in
from tutor.course.loader import Course

SERVICE_ENV = ("JUPYTERHUB_SERVICE_URL", "JUPYTERHUB_SERVICE_PREFIX", "JUPYTERHUB_API_TOKEN")


def expand(patterns: list[str]) -> list[Path]:
    """The files (and directories) the patterns name now, in a stable order, capped."""
    found: list[Path] = []
    for pattern in patterns:
        found += sorted(Path(p) for p in glob.glob(pattern))
    return found[:MAX_PROFILES]


def serve_hub_service(course: Course, patterns: list[str]) -> int:
    """Serve until the hub stops the service; 2 when not started by a hub (its environment missing)."""
    missing = [name for name in SERVICE_ENV if not os.environ.get(name)]
    if missing:
        raise ValueError(f"`class hub-service` runs as a JupyterHub service (missing {', '.join(missing)}); "
                         "see deploy/jupyterhub/README.md, or use `class watch` in a terminal")
    from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
    from jupyterhub.utils import url_path_join
    from tornado import ioloop, web

    prefix = os.environ["JUPYTERHUB_SERVICE_PREFIX"]
    address = urlparse(os.environ["JUPYTERHUB_SERVICE_URL"])

    class ClassNowPage(HubOAuthenticated, web.RequestHandler):
        @web.authenticated
        def get(self) -> None:
            now = class_now(course, profiles_in(expand(patterns)))
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.set_header("Cache-Control", "no-store")
            self.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
            self.write(live_page(now, course.title))

    app = web.Application([(prefix, ClassNowPage), (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler)],
                          cookie_secret=os.urandom(32))
    app.listen(address.port or 80, address.hostname or "127.0.0.1")
    print(f"The class now, for the hub's instructors: {prefix}", flush=True)
    ioloop.IOLoop.current().start()
    return 0
