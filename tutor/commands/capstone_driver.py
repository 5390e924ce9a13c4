"""The program `capstone --package mine` runs in the sandbox (see ``tutor/commands/capstone_mine.py``).

It makes the learner's stage files importable as ``capstone.<module>`` (so every stage that
imports an earlier one gets the learner's) and as ``llm.<module>`` (the name the stage labs
import them by), runs ``capstone.cli.main`` on the command line, and binds three names the
tutor reads from the observation: ``status`` (the command's exit status), ``problem`` (an
exception that escaped, named by the learner's file and line, never a traceback),
``imported`` (the capstone modules the command used) and ``given`` (per learner module, the
reference's public functions and classes the learner's file does not define, which the run
therefore took from the reference: a stage lab that leaves a part out says so in its prompt,
and the summary says whose code that part was). Whatever the command writes to stderr
(its progress lines, its messages) goes to the progress file as ``{"log": line}`` events, so
the tutor shows it while the run goes on; stdout (the summary) comes back with the result.
``STAGES_JSON``, ``ARGV_JSON`` and ``PROGRESS_JSON`` are replaced by the tutor with JSON string
literals; nothing here runs on the tutor's side.
"""

STATUS_NAMES = ("status", "problem", "imported", "given")

DRIVER = r'''
def _drive(stages, argv, progress):
    import ast
    import importlib
    import importlib.abc
    import importlib.util
    import io
    import json
    import sys
    import traceback

    class LogLines(io.TextIOBase):
        """stderr as progress-file events, a line at a time."""

        def __init__(self, path):
            self.file, self.pending = open(path, "a", encoding="utf-8", buffering=1), ""

        def writable(self):
            return True

        def write(self, text):
            self.pending += text
            while "\n" in self.pending:
                line, self.pending = self.pending.split("\n", 1)
                self.file.write(json.dumps({"log": line[:1000]}) + "\n")
            return len(text)

        def flush(self):
            self.file.flush()

    sys.stderr = LogLines(progress)

    origins = {spec["origin"]: spec["label"] for spec in stages.values()}
    given = {}  # module -> the reference's public defs the learner's file left out

    def parameters(tree):
        """``(qualified name, parameters as a call binds them)`` of a module's functions and methods."""
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                functions = [(f"{node.name}.{m.name}", m) for m in node.body if isinstance(m, ast.FunctionDef)]
            else:
                functions = [(node.name, node)] if isinstance(node, ast.FunctionDef) else []
            for called, function in functions:
                args = function.args
                for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                    if arg is not None:
                        arg.annotation = None  # names and defaults are what a call binds
                yield called, ast.unparse(args)

    class LearnerStages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        """capstone.<stage> from the learner's text; llm.<stage> is the same module object."""

        def find_spec(self, fullname, path=None, target=None):
            if fullname in stages:
                return importlib.util.spec_from_loader(fullname, self, origin=stages[fullname]["origin"])
            if fullname == "llm" or fullname.startswith("llm."):
                return importlib.util.spec_from_loader(fullname, self, is_package=fullname == "llm")
            return None

        def create_module(self, spec):
            if spec.name.startswith("llm."):
                return importlib.import_module("capstone." + spec.name[len("llm."):])
            return None

        def exec_module(self, module):
            name = module.__name__
            if name in stages and not getattr(module, "_learner_loaded", False):
                module.__file__ = stages[name]["origin"]
                module._learner_loaded = True
                # The reference first, then the learner's file over it: what the lab asked for is
                # theirs, and what it did not (a workspace stage, say) is the reference's, calling theirs.
                reference = stages[name]["reference"]
                exec(compile(reference, f"<the reference {name}>", "exec"), module.__dict__)
                defs = {node.name: module.__dict__.get(node.name) for node in ast.parse(reference).body
                        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")}
                exec(compile(stages[name]["source"], stages[name]["origin"], "exec"), module.__dict__)
                given[name] = [d for d, obj in defs.items() if module.__dict__.get(d) is obj]

        def get_source(self, fullname):
            return stages.get(fullname, {}).get("source")

    def where(exc):
        """``(where in the learner's files it went wrong, what more to say)``; either may be empty."""
        if isinstance(exc, SyntaxError) and exc.filename in origins:
            return f"{origins[exc.filename]}, line {exc.lineno}", ""
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in origins]
        if frames:
            return f"{origins[frames[-1].filename]}, line {frames[-1].lineno}, in {frames[-1].name}", ""
        return called_otherwise(exc)

    def called_otherwise(exc):
        """A TypeError from calling a def of the learner's with the reference's arguments: it is
        raised before any line of theirs runs, so no frame names their file; the def does.
        ``(where, how the command calls it)``, or two empty strings."""
        called = str(exc).split("()", 1)[0] if isinstance(exc, TypeError) and "()" in str(exc) else ""
        head, _, rest = called.partition(".")
        for name in stages:
            obj = getattr(sys.modules.get(name), head, None) if head.isidentifier() else None
            for part in rest.split(".") if rest else ():
                obj = getattr(obj, part, None)
            code = getattr(obj, "__code__", None)
            if code is not None and code.co_filename in origins:
                reference = dict(parameters(ast.parse(stages[name]["reference"]))).get(called)  # only now: rare
                expected = f" (the command calls it as the reference defines it: {called}({reference}))" \
                    if reference is not None else ""
                return f"{origins[code.co_filename]}, line {code.co_firstlineno}, in {called}", expected
        return "", ""

    sys.meta_path.insert(0, LearnerStages())
    problem, status = "", 1
    try:
        from capstone.cli import main
        status = main(argv)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # the learner's code: say where, never a traceback
        place, expected = where(exc)
        message = str(exc).splitlines()[0] if str(exc) else ""
        problem = ((f"{place}: " if place else "") + f"{type(exc).__name__}: {message}" + expected)[:1500]
        if not place:
            problem += " (in code of yours it called: run the stage's lab to find which contract fails)"
    imported = "|".join(sorted(name for name in sys.modules if name.startswith("capstone.")))
    if sys.stderr.pending:  # an unfinished last line
        sys.stderr.write("\n")
    sys.stderr.flush()
    sys.stderr = sys.__stderr__
    return status, problem, imported, json.dumps(given)


import json as _json

status, problem, imported, given = _drive(_json.loads(STAGES_JSON), _json.loads(ARGV_JSON), _json.loads(PROGRESS_JSON))
del _drive, _json
'''
