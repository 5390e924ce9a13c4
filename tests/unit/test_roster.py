"""serve-ui's class roster and the signed learner cookie (``tutor/web/roster.py``)."""

from __future__ import annotations

import pytest

from tutor.web.roster import LearnerCookie, RosterError, learner_profile, read_roster
from tutor.locations import valid_profile_name


def test_a_roster_reads_names_and_secrets_and_says_where_it_is_wrong(tmp_path):
    path = tmp_path / "roster.txt"
    path.write_text("# class of 2026\n\nana ana-secret-1   # first row\nben.k ben-secret-2\n")
    roster = read_roster(path)
    assert roster.admits("ana", "ana-secret-1") and not roster.admits("ana", "ben-secret-2")
    assert not roster.admits("zoe", "ana-secret-1") and roster.admits("ben.k", "ben-secret-2")
    for text, said in (("ana\n", ":1: expected `NAME SECRET`"), ("ana short\n", "shorter than 8"),
                       ("-x longsecret\n", "is not a learner name"), ("a secret-1\na secret-2\n", ":2: a is listed twice"),
                       ("# nobody\n", "lists no learner")):
        path.write_text(text)
        with pytest.raises(RosterError, match=said.replace("`", ".")):
            read_roster(path)


def test_a_learner_cookie_names_only_whom_this_server_signed():
    cookie, other = LearnerCookie("token-a"), LearnerCookie("token-b")
    signed = cookie.make("ana")
    assert cookie.read(signed) == "ana"
    assert other.read(signed) is None  # another server's (or an earlier run's) key
    assert cookie.read("ben." + signed.rpartition(".")[2]) is None  # ana's signature on ben's name
    assert cookie.read(None) is None and cookie.read("ana") is None and cookie.read("../x.y") is None
    assert valid_profile_name(learner_profile("ben.k_2-x" * 4))
