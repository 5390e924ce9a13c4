"""Plain mode's start and prompts are predictable and scriptable (issue 12 items 21, 22)."""

from __future__ import annotations

import io

import pytest

from tutor.cli import main
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir
from tutor.plain.plain_tutor import PROMPT_KINDS, run_plain
from tutor.plain.text import gpu_note_text, markdown_to_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session


class ByKind(io.TextIOBase):
    """A script that answers each prompt by the kind it starts with ("[answer] … > "), not by position."""

    def __init__(self, out: io.StringIO, answers: dict[str, list[str]]):
        self.out, self.answers, self.kinds = out, answers, []

    def readline(self) -> str:
        text = self.out.getvalue()
        assert text.endswith("> "), f"not at a prompt: {text[-80:]!r}"
        # the protocol: the last "[kind] " written opens the prompt (answers are not echoed into the output)
        kind = max(PROMPT_KINDS, key=lambda k: text.rfind(f"[{k}] "))
        assert text.rfind(f"[{kind}] ") >= 0
        self.kinds.append(kind)
        queue = self.answers.get(kind) or [":quit"]
        return queue.pop(0) + "\n"


def test_a_script_answers_by_prompt_kind_and_the_first_prompt_is_the_module_list(tmp_path, mini_course,
                                                                                  scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store)
    store.set_position("01", "sum-dtype")  # a profile that was somewhere: the start does not depend on it
    out = io.StringIO()
    script = ByKind(out, {"module": ["01"], "answer": ["1x3", "int64", "6"], "confidence": ["", ""]})
    assert run_plain(session, "default", script, out, scripted_sandbox) == 0
    assert script.kinds[:4] == ["module", "answer", "confidence", "answer"]
    text = out.getvalue()
    assert "Enter to resume module 01" in text  # offered, never taken without asking
    assert text.count("Verified ✓ right.") == 2


def test_empty_module_answer_resumes_and_start_points_begin_where_named(tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store)
    store.set_position("01", "sum-dtype")
    out = io.StringIO()
    run_plain(session, "default", io.StringIO("\n:quit\n"), out, scripted_sandbox)
    assert "drill 2/2" in out.getvalue()  # Enter at [module]: where the learner left off

    assert session.start_point("1") == ("01", "transpose-strides")  # --module 1 is 01
    assert session.start_point(drill_id="sum-dtype") == ("01", "sum-dtype")
    assert session.start_point(drill_id="01/sum-dtype") == ("01", "sum-dtype")
    out = io.StringIO()
    run_plain(session, "default", io.StringIO(":quit\n"), out, scripted_sandbox,
              start=session.start_point(drill_id="sum-dtype"))
    first_prompt = out.getvalue().split("> ", 1)[0].rsplit("\n", 1)[-1]
    assert first_prompt.startswith("[answer]") and "drill 2/2" in out.getvalue()


def test_the_command_line_refuses_a_start_it_cannot_open(tmp_path, monkeypatch, capsys, mini_course_dir):
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path))
    base = ["--lessons", str(mini_course_dir), "--trust-lessons", "--plain"]
    assert main([*base, "--drill", "no-such-drill"]) == 2
    assert "there is no drill 'no-such-drill'" in capsys.readouterr().err
    assert main([*base, "--module", "02"]) == 2
    err = capsys.readouterr().err
    assert "module 02 is locked: needs 01" in err
    assert "'test 02' at plain mode's [module] prompt" in err  # the way in, for a learner without the app's map
    assert main(["--module", "01", "stats"]) == 2  # with a command: said, not ignored
    assert "not with `stats`" in capsys.readouterr().err


def test_plain_mode_prints_markdown_as_plain_text(tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    out = io.StringIO()
    run_plain(Session(mini_course, store), "default", io.StringIO("01\n(3, 1)\n\n:quit\n"), out, scripted_sandbox)
    text = out.getvalue()
    assert "y = x.t() for a contiguous 2×3 x. What are y's strides?" in text
    assert "`" not in text and "**" not in text
    assert markdown_to_plain("The **local tag** and *this*; see [docs](https://x.y).\n\n### Why\n") == \
        "The local tag and this; see docs (https://x.y).\n\nWhy"
    note = gpu_note_text("*Not executed here.* On Linux x86-64 the default wheel is a CUDA build: "
                         "`torch.version.cuda` then holds a version string.")
    assert note.startswith("On Linux x86-64") and "Not executed" not in note and "`" not in note


def test_the_gpu_note_label_is_said_once():
    from tutor.plain.text import without_not_executed

    assert without_not_executed("*Not executed here.* On a GPU the kernel is queued.") == \
        "On a GPU the kernel is queued."
    assert without_not_executed("On a GPU it differs.") == "On a GPU it differs."


def test_a_modules_self_check_is_a_start_point_too(tmp_path, mini_course, scripted_sandbox):
    session = Session(mini_course, ProfileStore.open(tmp_path / "p.sqlite"))
    assert session.start_point(drill_id="01/self-check") == ("01", "self-check")
    assert session.start_point("01", "self-check") == ("01", "self-check")
    assert session.start_point(drill_id="self-check") == ("01", "self-check")  # the only module with one here
    with pytest.raises(ValueError, match="there is no drill '02/self-check'"):
        session.start_point(drill_id="02/self-check")  # 02 has no self-check questions
    builtin = Session(load_course(builtin_course_dir()), session.store)
    with pytest.raises(ValueError, match="have self-checks: say whose, e.g. --drill 01/self-check"):
        builtin.start_point(drill_id="self-check")
    out = io.StringIO()
    run_plain(session, "default", io.StringIO(":quit\n"), out, scripted_sandbox,
              start=session.start_point(drill_id="01/self-check"))
    assert "== 01 self-check" in out.getvalue() and "drill 1/2" not in out.getvalue()


def test_a_self_check_answer_typed_in_the_app_is_offered_and_enter_keeps_it(tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store)
    store.save_drafts("01", "self-check", {"answer:" + mini_course.slot("01").module.self_checks[0].id:
                                           "only the strides swap"})  # as the app's self-check screen keeps it
    out = io.StringIO()
    run_plain(session, "default", io.StringIO("\n3\n:quit\n"), out, scripted_sandbox, start=("01", "self-check"))
    text = out.getvalue()
    assert "Your answer from before: only the strides swap (Enter keeps it)" in text
    assert "Model answer:" in text  # Enter answered with it
    assert [a.answers for a in store.attempts() if a.kind == "self_check"] == [{"answer": "only the strides swap"}]
    assert store.drafts("01", "self-check") == {}  # answered: nothing left to keep


def test_on_a_fresh_profile_enter_starts_module_01_and_a_slip_is_one_line(tmp_path, mini_course, scripted_sandbox):
    # issue 36 item 11: Enter used to say "There is no module ''." and print the whole list again.
    session = Session(mini_course, ProfileStore.open(tmp_path / "p.sqlite"))
    out = io.StringIO()
    run_plain(session, "default", io.StringIO("99\nxyz\n\n:quit\n"), out, scripted_sandbox)
    text = out.getvalue()
    assert "Enter to start module 01" in text
    assert text.count("Modules:") == 1  # two slips, the list shown once
    assert "There is no module '99'; type a number from the list above." in text
    assert "There is no module 'xyz'" in text and "There is no module ''" not in text
    assert "drill 1/2" in text  # Enter opened module 01 at its first drill


def test_the_module_list_is_shown_while_the_sandbox_starts(tmp_path, mini_course, make_scripted_sandbox):
    # issue 36 item 12: nothing was printed for 10-12 s while the zygote started.
    import threading

    release = threading.Event()
    sandbox = make_scripted_sandbox()
    events = []

    async def slow_start():
        import asyncio

        await asyncio.to_thread(release.wait, 60)  # bounded: the old start-first order fails, not hangs
        events.append("started")

    sandbox.start = slow_start
    real_run = sandbox.run

    async def run(request):
        events.append("run")
        return await real_run(request)

    sandbox.run = run
    out = io.StringIO()

    class Learner(ByKind):
        def readline(self):
            if not self.kinds:  # the first prompt: the list is up and the start still going
                assert "Modules:" in out.getvalue() and "Starting the sandbox" in out.getvalue()
                assert events == []
                release.set()
            return super().readline()

    learner = Learner(out, {"module": ["01"], "answer": ["1x3", "int64"], "confidence": [""]})
    session = Session(mini_course, ProfileStore.open(tmp_path / "p.sqlite"))
    assert run_plain(session, "default", learner, out, sandbox) == 0
    assert events[:2] == ["started", "run"]  # the run waited for the start it followed
