"""Class mode for ``serve-ui``: each browser tab is one learner, with their own profile and workspace.

An instructor starts the server with a roster (``--roster FILE``: one learner a line, ``NAME SECRET``)
or behind a reverse proxy that authenticates learners and names them in a header it sets
(``--learner-header X-Remote-User``; the proxy must also present the server's token, so nothing
else on the machine can claim a name). The page asks who you are; a signed cookie then carries
the learner's name, and the tutor process for their tab runs with the profile ``class-NAME``: no
learner can open another's profile (the name comes from the signature, never from the page), and a
second tab of the same learner is refused while the first is open (one writer per profile).
Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from pathlib import Path

from tutor.locations import CLASS_PROFILE_PREFIX as PROFILE_PREFIX

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
MIN_SECRET = 8
MAX_ROSTER = 1000


class RosterError(ValueError):
    """A roster the server cannot use; the message names the file and line."""


@dataclass(frozen=True)
class Roster:
    secrets: dict[str, str]  # learner's name -> their secret

    def admits(self, name: str, secret: str) -> bool:
        """Whether ``secret`` is ``name``'s (compared in constant time, a wrong name costs the same)."""
        expected = self.secrets.get(name, "\0" * MIN_SECRET)
        return hmac.compare_digest(expected.encode(), secret.encode()) and name in self.secrets


def read_roster(path: Path) -> Roster:
    """``NAME SECRET`` a line (blank lines and ``#`` comments ignored); every problem at its line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"{path}: cannot be read ({exc})") from None
    secrets: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        where = f"{path}:{number}"
        if len(parts) != 2:
            raise RosterError(f"{where}: expected `NAME SECRET` (two words)")
        name, secret = parts
        if not NAME.fullmatch(name):
            raise RosterError(f"{where}: {name[:40]!r} is not a learner name (letters, digits, '.', '_', '-'; "
                              "at most 40, starting with a letter or digit)")
        if len(secret) < MIN_SECRET:
            raise RosterError(f"{where}: {name}'s secret is shorter than {MIN_SECRET} characters")
        if name in secrets:
            raise RosterError(f"{where}: {name} is listed twice")
        secrets[name] = secret
        if len(secrets) > MAX_ROSTER:
            raise RosterError(f"{path}: more than {MAX_ROSTER} learners")
    if not secrets:
        raise RosterError(f"{path}: lists no learner (`NAME SECRET` a line)")
    return Roster(secrets)


def learner_profile(name: str) -> str:
    """The profile a learner's tutor runs with (a valid profile name for every valid learner name)."""
    return PROFILE_PREFIX + name


class LearnerCookie:
    """The learner's name, signed with a key only this server holds: ``NAME.SIGNATURE``."""

    def __init__(self, key: str):
        self._key = hashlib.sha256(b"pytorch-tutor learner cookie\0" + key.encode()).digest()

    def make(self, name: str) -> str:
        return f"{name}.{self._sign(name)}"

    def read(self, value: str | None) -> str | None:
        """The name a cookie signs, or None (absent, malformed, or signed by another key)."""
        if not value or "." not in value:
            return None
        name, _, signature = value.rpartition(".")
        if not NAME.fullmatch(name) or not hmac.compare_digest(signature, self._sign(name)):
            return None
        return name

    def _sign(self, name: str) -> str:
        return hmac.new(self._key, name.encode(), hashlib.sha256).hexdigest()[:32]
