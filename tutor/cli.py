"""The ``pytorch-tutor`` command line.

With no subcommand it opens the tutor. Imports are local to each command so that
``validate`` never pays for Textual and nothing here imports torch.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from tutor import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pytorch-tutor",
        description="Learn PyTorch by predicting what it will do, then watching it happen.",
    )
    parser.add_argument("--version", action="version", version=f"pytorch-tutor {__version__}")
    parser.add_argument("--profile", default="default", metavar="NAME",
                        help="whose progress to use (default: %(default)s); profiles live under "
                             "$PYTORCH_TUTOR_HOME or your user data directory")
    parser.add_argument("--lessons", type=Path, metavar="DIR",
                        help="a course directory to use instead of the built-in course")
    parser.add_argument("--course", metavar="ID",
                        help="an installed lesson pack (see `courses`); third-party lessons, like --lessons")
    parser.add_argument("--trust-lessons", action="store_true",
                        help="run lessons from outside the built-in course even where the sandbox cannot "
                             "confine them (see `doctor`)")
    parser.add_argument("--allow-grants", action="store_true",
                        help="accept what a lesson pack asks the sandbox for (processes, exec, loopback) "
                             "without being asked; the tutor asks once per pack otherwise")
    parser.add_argument("--watch", action="store_true",
                        help="with --lessons: reload a module when its file changes, staying on the drill "
                             "being edited, and open any module whatever it requires (for lesson authors; "
                             "with --plain: every module open, nothing reloaded)")
    parser.add_argument("--idle-exit", type=float, default=0.0, metavar="MINUTES",
                        help="end the app after MINUTES without a key or a click, saving everything (serve-ui "
                             "sets it for each browser tab, from its --idle-minutes)")
    parser.add_argument("--plain", action="store_true",
                        help="the same drills line by line without the full-screen app (screen readers, scripts; "
                             "reads answers from stdin)")
    parser.add_argument("--module", metavar="ID",
                        help="open this module at its first unfinished drill (else the map, resuming where you "
                             "left off; in plain mode the module list)")
    parser.add_argument("--drill", metavar="[MODULE/]ID", dest="start_drill",
                        help="open this drill or lab (MODULE/ when two modules have one of that id; MODULE/self-check: "
                             "that module's self-check)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("validate", help="check lesson files' schema and graph (fast, no torch)")
    p.add_argument("paths", nargs="*", type=Path, help="course directories or module files (default: built-in)")

    p = sub.add_parser("check", help="run every drill in the sandbox and prove its claims")
    _also_after_command(p)
    p.add_argument("paths", nargs="*", type=Path, help="course directories or module files (default: built-in)")
    p.add_argument("--drill", metavar="ID", action="append", help="only the drill with this id (repeat for several)")
    p.add_argument("--jobs", type=int, metavar="N", help="drills run at once (default: the number of cores)")
    p.add_argument("--setting", action="append", default=[], metavar="CAPABILITY[/THREADS]", dest="settings",
                   help="run the drills under ATen's CPU kernel set (machine, default, avx2, avx512) and an "
                        "intra-op thread count, e.g. `--setting machine --setting default/1`; repeated, every "
                        "drill must decide the same under each (what moved is reported and fails the check)")

    p = sub.add_parser("try", help="run a submission against a lab or a repair and print its verdict (for authors)")
    _also_after_command(p)
    p.add_argument("drill", metavar="[MODULE/]ID", help="the lab or repair drill")
    p.add_argument("submission", type=Path, metavar="FILE", help="the learner's file (a lab's main file, a repair's code)")
    p.add_argument("paths", nargs="*", type=Path, help="course directory or module file (default: --lessons or built-in)")
    p.add_argument("--file", action="append", default=[], metavar="NAME=PATH", dest="files",
                   help="a multi-file lab's other file (else its reference), repeatable")
    p.add_argument("--instance", metavar="NAME=VALUE,...", default="",
                   help="a drill with variants: the instance to judge (default: the one it is loaded as, named in "
                        "the output)")

    p = sub.add_parser("run", help="run a snippet file in the sandbox and print what it observed")
    p.add_argument("snippet", type=Path)
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="limit (default: 10)")
    p.add_argument("--trace", action="store_true", help="also print every tensor after every top-level line")
    p.add_argument("--function", metavar="NAME", default="", help="with --trace: trace inside this function too")
    p.add_argument("--view", nargs="+", action="append", default=[], metavar="WORD",
                   help="also print a view of a name the snippet binds, after it ran: `--view storage y`, "
                        "`--view graph loss`, `--view module model opt` (repeatable)")

    sub.add_parser("progress", help="print the profile's progress as a table")

    sub.add_parser("doctor", help="show how snippets are isolated on this machine")

    sub.add_parser("stats", help="accuracy, calibration and time per module and concept")

    p = sub.add_parser("review", help="what is due for spaced review today (and the review screen)")
    p.add_argument("--list", action="store_true", help="only print what is due; do not open the app")

    p = sub.add_parser("interview", help="a timed mock interview over what you have done, with a debrief")
    _also_after_command(p)
    p.add_argument("--minutes", type=int, choices=(15, 30, 45), help="its length (asked when not given)")
    p.add_argument("--scope", metavar="SCOPE", help="'done' (the modules you have done or tested out) or a part of "
                                                    "the course by its id (asked when not given)")
    p.add_argument("--debrief", action="store_true", help="show the last interview's debrief again; runs nothing")
    p.add_argument("--markdown", type=Path, metavar="FILE", help="with --debrief: write it to FILE (Markdown)")

    p = sub.add_parser("profile", help="export or import a profile (merges histories from two machines)")
    p.add_argument("action", choices=["export", "import"])
    p.add_argument("file", type=Path)
    p.add_argument("--name", metavar="NAME", help="export: the learner's name, which class-report shows "
                                                  "(default: the file's name)")

    p = sub.add_parser("new", help="scaffold a lesson pack or a module that validate and check pass")
    new = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    q = new.add_parser("course", help="a pip-installable pack with one module, in a new directory")
    q.add_argument("directory", type=Path, metavar="DIR")
    q.add_argument("--title", help="the course's title (default: from DIR's name)")
    q = new.add_parser("module", help="a module with one annotated drill of each kind, listed in course.yaml")
    q.add_argument("directory", type=Path, metavar="DIR", help="the course directory (holds course.yaml)")
    q.add_argument("--id", required=True, help='the module id, e.g. 02')
    q.add_argument("--title", required=True)

    p = sub.add_parser("migrate", help="rewrite module files in a newer lesson format, changing nothing they mean")
    p.add_argument("paths", nargs="+", type=Path, metavar="DIR|FILE", help="a course directory or module files")
    p.add_argument("--to", type=int, default=None, metavar="N", help="the format to write (default: the newest)")
    p.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    p.add_argument("--no-backup", action="store_true", help="do not keep the original as NAME.yaml.format<N>")

    sub.add_parser("courses", help="the lesson packs installed as Python packages: id, version, sandbox grants")

    p = sub.add_parser("class-report", help="a class's progress from learners' profiles or their exports")
    p.add_argument("exports", nargs="+", type=Path, metavar="PROFILE",
                   help="files from `profile export`, or learners' profiles themselves (…/profiles/NAME.sqlite, "
                        "read-only; on JupyterHub each learner's home holds one)")
    p.add_argument("--html", type=Path, metavar="FILE", help="write an HTML report with charts instead")

    p = sub.add_parser("class", help="for instructors: who is stuck now, read live from learners' profiles")
    cls = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    q = cls.add_parser("watch", help="a live table: each learner's current drill, attempts and minutes on it, "
                                     "who is stuck, and the misconceptions revealed in the last hour")
    q.add_argument("paths", nargs="+", type=Path, metavar="PROFILE|DIR",
                   help="learners' profiles (…/profiles/NAME.sqlite), or directories searched for them at "
                        "every refresh")
    q.add_argument("--every", type=float, default=5.0, metavar="S", help="seconds between refreshes (default 5)")
    q.add_argument("--once", action="store_true", help="print the table once and stop")
    q = cls.add_parser("hub-service", help="the live view as a page, run by JupyterHub as a service that only the "
                                           "hub's instructors may open (deploy/jupyterhub)")
    q.add_argument("patterns", nargs="+", metavar="PATTERN",
                   help="learners' profiles, as shell patterns expanded at every load, e.g. "
                        "'/home/*/.local/share/pytorch-tutor/profiles/default.sqlite'")

    p = sub.add_parser("serve-ui", help="serve the tutor to browsers (one tutor process and sandbox per tab); "
                                        "single-user unless --roster or --learner-header makes it a class's")
    _also_after_command(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s, loopback)")
    p.add_argument("--port", type=int, default=8000, help="port (default: %(default)s; 0 picks a free one)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a --host that is not loopback (behind an authenticating proxy; see README)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME[:PORT]",
                   help="a Host name a reverse proxy passes on (repeatable); loopback names are always allowed")
    p.add_argument("--max-sessions", type=int, default=4, metavar="N",
                   help="the most tutor processes (open tabs) at once (default: %(default)s)")
    p.add_argument("--unix-socket", type=Path, metavar="PATH",
                   help="listen on a Unix socket instead of --host/--port (jupyter-server-proxy's unix_socket)")
    p.add_argument("--idle-minutes", type=float, default=60.0, metavar="M",
                   help="end a tab's session after M minutes without a key or a click, saving everything, so an "
                        "idle tab holds no tutor process (default: %(default)s; 0: never)")
    p.add_argument("--roster", type=Path, metavar="FILE",
                   help="class mode: each tab is one learner, who signs in with a name and secret listed in FILE "
                        "(`NAME SECRET` a line) and gets their own profile (class-NAME); one tab per learner")
    p.add_argument("--learner-header", metavar="HEADER", default="",
                   help="class mode behind a proxy that authenticates learners: the header it sets to the learner's "
                        "name (with --roster, only listed names); the proxy must also send the server's token")

    p = sub.add_parser("capstone", help="build, train and evaluate the capstone GPT (see --help)",
                       add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def _also_after_command(p: argparse.ArgumentParser) -> None:
    """--allow-grants (and --trust-lessons) where a learner or an author types them: after the command's name too
    (`pytorch-tutor check DIR --allow-grants`); given only before it, the value given there stands (SUPPRESS)."""
    p.add_argument("--allow-grants", action="store_true", default=argparse.SUPPRESS,
                   help="as before the command: accept what a lesson pack asks the sandbox for without being asked")
    p.add_argument("--trust-lessons", action="store_true", default=argparse.SUPPRESS,
                   help="as before the command: run third-party lessons where the sandbox cannot confine them")


def _course_paths(args: argparse.Namespace) -> list[Path]:
    from tutor.locations import builtin_course_dir

    if getattr(args, "paths", None):
        return list(args.paths)
    return [args.lessons or builtin_course_dir()]


def _refuse_third_party(paths: list[Path], trusted: bool) -> bool:
    """Say so and return True when lessons from outside the built-in course must not run here."""
    from tutor.locations import builtin_course_dir
    from tutor.sandbox.client import third_party_refusal

    message = third_party_refusal(paths, builtin_course_dir(), trusted)
    if message:
        print(f"pytorch-tutor: {message}", file=sys.stderr)
    return bool(message)


_TOP_OPTIONS_WITH_VALUE = ("--profile", "--lessons", "--course")


def _capstone_tail(argv: list[str]) -> tuple[list[str], list[str]] | None:
    """(the tutor's own arguments, the capstone's) when the command is ``capstone``.

    argparse's REMAINDER drops a first argument that looks like an option, so
    ``capstone --help`` would never reach the capstone: everything after the
    command word is handed over untouched instead.
    """
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in _TOP_OPTIONS_WITH_VALUE:
            i += 2
            continue
        if token.startswith("-"):
            i += 1
            continue
        return (argv[:i + 1], argv[i + 1:]) if token == "capstone" else None
    return None


def _scaffold(args: argparse.Namespace) -> int:
    from tutor.course.scaffold import ScaffoldError, new_course, new_module

    try:
        if args.what == "course":
            course_dir = new_course(args.directory, args.title)
            print(f"wrote a lesson pack in {args.directory}; its course is {course_dir}/\n"
                  f"next: pytorch-tutor validate {course_dir} && pytorch-tutor check {course_dir}\n"
                  f"try it: pytorch-tutor --lessons {course_dir}")
        else:
            path = new_module(args.directory, args.id, args.title)
            print(f"wrote {path} and listed it in {args.directory / 'course.yaml'}\n"
                  f"next: pytorch-tutor check {path}")
    except ScaffoldError as exc:
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    from tutor.locations import make_data_private, private_files

    with private_files(), inert_output():  # profiles, exports, workspace files: the learner's alone
        for note in make_data_private():
            print(f"pytorch-tutor: note: {note}", file=sys.stderr)
        return _run(argv)


@contextlib.contextmanager
def inert_output():
    """Everything a command prints goes through ``InertStream``: no pack's or profile's text, and
    no snippet's output, writes a raw control character to the terminal, whichever command shows it."""
    from tutor.safe_text import InertStream

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(sys.stdout), InertStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _run(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    split = _capstone_tail(argv)
    args = _parser().parse_args(split[0] if split else argv)
    if split:
        args.args = split[1]
    try:
        if args.course is not None:  # an installed pack is a course directory like any --lessons DIR
            from tutor.course.packs import course_dir

            if args.lessons is not None:
                raise ValueError("--course and --lessons both name a course: use one")
            args.lessons = course_dir(args.course)
        if args.watch and (args.lessons is None or args.command):
            raise ValueError("--watch is for an author's own lessons: use it with --lessons DIR (or --course ID), "
                             "in the app (which reloads them on every save) or with --plain (every module open)")
        if (args.module or args.start_drill) and args.command:
            raise ValueError(f"--module and --drill choose where the tutor opens: not with `{args.command}`")
        if args.command == "new":
            return _scaffold(args)
        if args.command == "migrate":
            from tutor.commands.authoring import migrate

            return migrate(args.paths, args.to, args.dry_run, not args.no_backup, sys.stdout)
        if args.command == "courses":
            from tutor.course.packs import print_courses

            return print_courses(sys.stdout)
        if args.command == "validate":
            from tutor.commands.validation import validate

            return validate(_course_paths(args), sys.stdout)
        if args.command == "check":
            from tutor.commands.authoring import check

            if _refuse_third_party(_course_paths(args), args.trust_lessons):
                return 2
            from tutor.sandbox.kernel_settings import KernelSettings, SettingError
            from tutor.startup import ask_on_terminal

            try:
                settings = [KernelSettings.parse(text) for text in args.settings]
            except SettingError as exc:
                print(f"check: {exc}", file=sys.stderr)
                return 2
            return check(_course_paths(args), sys.stdout, drill_id=args.drill, parallel=args.jobs, settings=settings,
                         allow_grants=args.allow_grants, consent=ask_on_terminal)
        if args.command == "try":
            from tutor.startup import ask_on_terminal
            from tutor.commands.try_submission import try_submission

            if _refuse_third_party(_course_paths(args), args.trust_lessons):
                return 2
            return try_submission(_course_paths(args), args.drill, args.submission, sys.stdout, args.files,
                                  allow_grants=args.allow_grants, consent=ask_on_terminal, instance=args.instance)
        if args.command == "run":
            from tutor.commands.snippet_report import run_snippet_file

            return run_snippet_file(args.snippet, args.timeout, sys.stdout, trace=args.trace, function=args.function,
                                    views=args.view)
        if args.command == "doctor":
            from tutor.sandbox.doctor import print_report

            return print_report(sys.stdout)
        if args.command == "interview" and args.markdown is not None and not args.debrief:
            raise ValueError("--markdown writes a debrief: use it with --debrief")
        if args.command in ("progress", "stats", "review", "profile", "interview"):
            from tutor.commands import profile as profile_commands

            return profile_commands.main(args, sys.stdout)
        if args.command == "class":
            from tutor.classroom import class_hub_service, class_watch

            if args.what == "hub-service":
                return class_hub_service(args.patterns, args.lessons)
            return class_watch(args.paths, args.lessons, args.every, args.once)
        if args.command == "class-report":
            from tutor.classroom import class_report

            return class_report(args.exports, args.lessons, args.html)
        if args.command == "serve-ui":
            from tutor.web.serve import ServeError, ServeOptions, serve

            options = ServeOptions(host=args.host, port=args.port, allow_remote=args.allow_remote,
                                   profile=args.profile, lessons=args.lessons, trust_lessons=args.trust_lessons,
                                   allow_grants=args.allow_grants, allow_hosts=tuple(args.allow_host),
                                   max_sessions=args.max_sessions, unix_socket=args.unix_socket,
                                   idle_minutes=args.idle_minutes, roster=args.roster,
                                   learner_header=args.learner_header)
            try:
                return serve(options)
            except ServeError as exc:
                print(f"pytorch-tutor: {exc}", file=sys.stderr)
                return 2
        if args.command == "capstone":
            from capstone.cli import main as capstone_main

            return capstone_main(args.args, profile=args.profile)
        if args.plain:
            from tutor.commands.profile import plain

            return plain(args)
        from tutor.app.launch import launch

        return launch(profile=args.profile, lessons=args.lessons, trust_lessons=args.trust_lessons,
                      allow_grants=args.allow_grants, watch=args.watch, module=args.module, drill=args.start_drill,
                      idle_exit=args.idle_exit)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `pytorch-tutor check | head`: the reader left; so do we, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ValueError as exc:  # bad names and paths from the command line
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
