"""A view of what PyTorch recorded, as the presenter's neutral blocks (and so as plain text).

Each view (checked by ``wire.views.read_view``) becomes lines that say everything in
words first (for a screen reader, and for plain mode), then, for storage, a drawing of
the cells at most :data:`WIDTH` columns wide, so it stays legible in an 80-column
terminal inside the result panel's border. Every string from the sandbox passes
through ``inert`` again here: a view's names come from the learner's code.
"""

from __future__ import annotations

from tutor.safe_text import inert
from tutor.sandbox.bindings import bound_names
from tutor.tutoring.presentation import Block, Tone, line

WIDTH = 72  # columns of a drawing line: the result panel at 80 columns leaves 74
SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
LETTERS = "ijklmn"
KIND_WORDS = {"storage": "storage", "graph": "autograd graph", "module": "registered model"}


def view_blocks(view: dict) -> list[Block]:
    """One view: a heading, then its lines."""
    kind, of = view.get("kind", ""), inert(str(view.get("of", "")))
    if "error" in view:
        return [line((f"View of {KIND_WORDS.get(kind, kind)} of {of}: ", Tone.STRONG), (inert(view["error"]), Tone.BAD))]
    return {"storage": storage_blocks, "graph": graph_blocks, "module": module_blocks}[kind](view)


def views_blocks(views) -> list[Block]:
    blocks: list[Block] = []
    for view in views:
        blocks.extend(view_blocks(view))
    return blocks


def shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _value_text(v) -> str:
    if isinstance(v, bool):
        return "T" if v else "F"
    if isinstance(v, float):
        text = format(v, ".4g")
        return text if any(c in text for c in ".enai") else text + "."  # 4. reads as a float, 4 as an int
    return str(v)


def _names(names) -> str:
    return ", ".join(inert(n) for n in names)


# ---------------------------------------------------------------- storage


def storage_blocks(view: dict) -> list[Block]:
    members = view["members"]
    of = inert(view["of"])
    start, shown, total = view["start"], view["shown"], view["cells"]
    others = [m["name"] for m in members[1:]]
    sharing = f"; also reached by {_names(others)}" if others else "; no other name shares it"
    blocks: list[Block] = [line((f"Storage under {of}: ", Tone.STRONG),
                                f"{total:,} cells of {view['dtype']} ({view['itemsize']} bytes each){sharing}.")]
    if shown < total:
        blocks.append(line((f"The storage has {total:,} cells; cells {start}–{start + shown - 1} are drawn.",
                            Tone.DIM)))
    for m in members:
        blocks.append(line(f"  {_member_words(m)}"))
    blocks.extend(line(text) for text in storage_drawing(view))
    if "selected" in view:
        blocks.append(line(("Index rule: ", Tone.STRONG), _index_rule(view)))
    return blocks


def _member_words(m: dict) -> str:
    shape, stride = shape_text(m["shape"]), shape_text(m["stride"])
    layout = "contiguous" if m["contiguous"] else "not contiguous"
    dtype = f" {m['dtype']}" if m.get("dtype") else ""
    marks = m["marks"]
    most = max((n for _, n in marks), default=0)
    cells = [c for c, _ in marks]
    where = _cell_ranges(cells)
    reach = f"{m['numel']:,} elements on {m['distinct']:,} cell{'s' if m['distinct'] != 1 else ''}"
    if most > 1:
        reach += f" (up to {most} elements on one cell: a stride of 0 repeats it)"
    beyond = f"; {m['outside']:,} elements fall on cells not drawn" if m["outside"] else ""
    partial = "; only its first elements were placed" if m["partial"] else ""
    return (f"{inert(m['name'])}{dtype}: shape {shape}, stride {stride}, offset {m['offset']}, {layout}; "
            f"{reach}{': cells ' + where if where else ''}{beyond}{partial}")


def _cell_ranges(cells: list[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` as ``0–2, 5, 7–8`` (a screen reader says it in one breath)."""
    if not cells:
        return ""
    parts, first = [], cells[0]
    previous = first
    for c in cells[1:] + [None]:
        if c is not None and c == previous + 1:
            previous = c
            continue
        parts.append(str(first) if first == previous else f"{first}–{previous}")
        if c is not None:
            first = previous = c
    return ", ".join(parts)


def _mark(count: int) -> str:
    return "" if count == 0 else "●" if count == 1 else f"×{count}"


def storage_drawing(view: dict) -> list[str]:
    """The cells in rows: index, value, then one row per name marking the cells its elements land on."""
    start, shown = view["start"], view["shown"]
    cells = list(range(start, start + shown))
    values = view.get("values")
    members = view["members"]
    marks = [{c: n for c, n in m["marks"]} for m in members]
    labels = ["cell", "value"] + [inert(m["name"]) for m in members]
    label_width = min(10, max(len(t) for t in labels)) + 2
    columns = []
    for i, cell in enumerate(cells):
        texts = [str(cell), _value_text(values[i]) if values is not None and i < len(values) else "?"]
        texts += [_mark(m.get(cell, 0)) for m in marks]
        columns.append(texts)
    width = min(9, max(len(t) for col in columns for t in col)) + 1
    per_row = max(1, (WIDTH - label_width) // width)
    out: list[str] = []
    for begin in range(0, len(columns), per_row):
        chunk = columns[begin:begin + per_row]
        if begin:
            out.append("")
        for row, label in enumerate(labels):
            if row == 1 and values is None:
                continue
            text = label[:label_width - 2].ljust(label_width) + "".join(col[row][:width - 1].ljust(width) for col in chunk)
            out.append(text.rstrip())
    return out


def _index_rule(view: dict) -> str:
    sel = view["selected"]
    index, stride, offset = sel["index"], sel["stride"], sel["offset"]
    name = inert(sel["name"])
    where = f"{name}[{', '.join(map(str, index))}]" if index else name
    if not index:
        rule, worked = "offset", f"{offset}"
    else:
        letters = [LETTERS[d] if d < len(LETTERS) else f"i{d}" for d in range(len(index))]
        rule = "offset + " + " + ".join(f"{ch}·stride{str(d).translate(SUBSCRIPT)}" for d, ch in enumerate(letters))
        worked = f"{offset} + " + " + ".join(f"{i}·{s}" for i, s in zip(index, stride))
    values = view.get("values")
    cell = sel["cell"]
    value = ""
    if values is not None and view["start"] <= cell < view["start"] + len(values):
        value = f" (value {_value_text(values[cell - view['start']])})"
    return f"{where} is at cell {rule} = {worked} = {cell}{value}"


# ---------------------------------------------------------------- autograd graph

STATE_WORDS = {"freed": "freed: backward() already ran and released it",
               "unused": "not kept (this backward does not need it)",
               "unreadable": "could not be read"}


def graph_blocks(view: dict) -> list[Block]:
    root = view["root"]
    of = inert(view["of"])
    grad_fn = inert(root["grad_fn"]) if root.get("grad_fn") else "none"
    blocks: list[Block] = [line((f"Autograd graph from {of}: ", Tone.STRONG),
                                f"shape {shape_text(root['shape'])} {root['dtype']}, "
                                f"requires_grad {root['requires_grad']}, grad_fn {grad_fn}.")]
    if "why" in root:
        label = ("Where it stops: ", Tone.BAD) if not root["requires_grad"] else ("A leaf: ", Tone.STRONG)
        blocks.append(line(label, inert(root["why"])))
    for node in view["nodes"]:
        blocks.extend(_node_blocks(node))
    if view["truncated"]:
        blocks.append(line(("… the graph goes on: only the nodes nearest the tensor are listed.", Tone.DIM)))
    leaves = [n["leaf"] for n in view["nodes"] if "leaf" in n]
    if leaves:
        named = [inert(leaf["name"]) or f"an unnamed {shape_text(leaf['shape'])} tensor" for leaf in leaves]
        blocks.append(line(("Leaves that require grad (backward() fills their .grad): ", Tone.STRONG), ", ".join(named)))
    if view["unreached"]:
        blocks.append(line((f"Not reached from {of}: ", Tone.BAD),
                           f"{_names(view['unreached'])} — they require grad, but {of}.backward() leaves their "
                           ".grad untouched (None if nothing else reached them)."))
    return blocks


def _node_blocks(node: dict) -> list[Block]:
    inputs = []
    for i in node["inputs"]:
        inputs.append("a tensor that needs no grad (the path stops)" if i is None else
                      "… (not listed)" if i < 0 else f"[{i}]")
    if "leaf" in node:
        leaf = node["leaf"]
        who = inert(leaf["name"]) or "an unnamed tensor"
        head = f"  [{node['id']}] {inert(node['name'])}: leaf {who} {shape_text(leaf['shape'])}"
    else:
        head = f"  [{node['id']}] {inert(node['name'])}" + (" ← " + ", ".join(inputs) if inputs else "")
    blocks: list[Block] = [line(head)]
    for saved in node["saved"]:
        blocks.append(_saved_line(saved))
    return blocks


def _saved_line(saved: dict) -> Block:
    field = inert(saved["field"])
    if "shape" not in saved:
        return line(f"        saved {field}: {STATE_WORDS.get(saved['state'], saved['state'])}")
    who = inert(saved["name"]) or "an unnamed tensor"
    what = f"        saved {field}: {who} {shape_text(saved['shape'])} {saved['dtype']}"
    if saved["state"] == "modified":
        return line(what, (f" — saved at version {saved['saved_version']}, now version {saved['version']}: modified "
                           "in place since it was saved, so backward() through this node raises", Tone.BAD))
    if saved["state"] != "ok":
        return line(what, f" — {STATE_WORDS.get(saved['state'], saved['state'])}")
    note = "" if saved["requires_grad"] else ", needs no grad"
    return line(what + f", version {saved['version']} (unchanged since saved{note})")


# ---------------------------------------------------------------- module and optimizer


def module_blocks(view: dict) -> list[Block]:
    of = inert(view["of"])
    params, buffers = view["parameters"], view["buffers"]
    blocks: list[Block] = [line((f"Registered model {of}: ", Tone.STRONG),
                                f"{inert(view['class'])}, {len(params)} parameters, {len(buffers)} buffers.")]
    for node in view["tree"]:
        indent = "  " * (node["depth"] + 1)
        blocks.append(line(f"{indent}{inert(node['path']) or '(root)'}: {inert(node['class'])}"))
    has_optimizer = "groups" in view
    if params:
        blocks.append(line(("Parameters:", Tone.STRONG)))
    for p in params:
        grad = "requires grad" if p["requires_grad"] else "frozen (requires_grad False)"
        text = f"  {inert(p['name'])} {shape_text(p['shape'])} {p['dtype']}, {grad}"
        if has_optimizer:
            if p["groups"]:
                blocks.append(line(text + ", in optimizer group " + ", ".join(map(str, p["groups"]))))
            else:
                blocks.append(line(text, (", in no optimizer group", Tone.BAD)))
        else:
            blocks.append(line(text))
    if buffers:
        blocks.append(line(("Buffers:", Tone.STRONG)))
    for b in buffers:
        kept = "in state_dict" if b["persistent"] else "persistent=False: not in state_dict"
        blocks.append(line(f"  {inert(b['name'])} {shape_text(b['shape'])} {b['dtype']}, {kept}"))
    keys = view["state_dict"]
    blocks.append(line((f"state_dict keys ({len(keys)}): ", Tone.STRONG), _names(keys) or "none"))
    if view["other_keys"]:
        blocks.append(line(("Keys that are neither a parameter nor a buffer: ", Tone.STRONG), _names(view["other_keys"])))
    for held in view.get("unregistered", ()):
        blocks.append(line(("Not registered: ", Tone.BAD), f"{inert(held['name'])} is {inert(held['holds'])}: not in parameters() or "
                           "state_dict(), and .to() and .train() do not reach it"))
    if has_optimizer:
        blocks.extend(_optimizer_blocks(view))
    return blocks


def _optimizer_blocks(view: dict) -> list[Block]:
    groups = view["groups"]
    blocks: list[Block] = [line((f"Optimizer {inert(view['optimizer'])}: ", Tone.STRONG),
                                f"{inert(view['optimizer_class'])}, {len(groups)} parameter "
                                f"group{'s' if len(groups) != 1 else ''}.")]
    strays = []
    for group in groups:
        settings = ", ".join(f"{inert(k)} {v:g}" for k, v in group["settings"])
        members = []
        for p in group["params"]:
            label = inert(p["name"]) or f"an unnamed {shape_text(p['shape'])} tensor"
            if not p["registered"]:
                strays.append((group["index"], label))
                label += " (not registered)"
            members.append(label)
        more = f", … {group['count'] - len(group['params'])} more" if group["count"] > len(group["params"]) else ""
        blocks.append(line(f"  group {group['index']}" + (f" ({settings})" if settings else "") +
                           f": {group['count']} tensors: " + ", ".join(members) + more))
    unowned = [p["name"] for p in view["parameters"] if not p["groups"]]
    if unowned:
        blocks.append(line(("Registered parameters no group holds: ", Tone.BAD),
                           f"{_names(unowned)} — step() never changes them."))
    else:
        blocks.append(line(("Every registered parameter is in a group.", Tone.GOOD)))
    if strays:
        by_group: dict[int, list[str]] = {}
        for g, label in strays:
            by_group.setdefault(g, []).append(label)
        blocks.append(line(("Group members the model does not register: ", Tone.BAD),
                           "; ".join(f"group {g}: {', '.join(labels)}" for g, labels in by_group.items()) +
                           f" — the optimizer holds them, but they are not in {inert(view['of'])}.parameters() or "
                           "its state_dict (a replaced layer's old tensors, a plain attribute, or a tensor made elsewhere)."))
    return blocks


# ---------------------------------------------------------------- what the learner types to open one

VIEW_USAGE = ("Type a view and a name: `storage y`, `graph loss`, or `module model opt` "
              "(a module, and optionally its optimizer).")


def read_view_request(text: str) -> tuple[str, str, str] | str:
    """``"graph loss"`` as ``("graph", "loss", "")``; a problem's wording (a str) when it cannot be read."""
    from tutor.sandbox.wire.views import NAME, VIEW_KINDS

    words = text.split()
    if not words or words[0].lower() not in VIEW_KINDS:
        return VIEW_USAGE
    kind, names = words[0].lower(), words[1:]
    if not names:
        return f"Which name? e.g. `{kind} {'model' if kind == 'module' else 'y'}`."
    if len(names) > (2 if kind == "module" else 1):
        return VIEW_USAGE
    bad = next((n for n in names if not NAME.fullmatch(n)), None)
    if bad is not None:
        return f"{inert(bad)[:40]!r} is not a name the code binds (a Python name, or name.attribute)."
    return kind, names[0], names[1] if len(names) > 1 else ""


def view_report_blocks(report) -> list[Block]:
    """A view the learner opened (``reports.ViewReport``): the view, or why there is none."""
    if not report.finished:
        return [line(("The view could not be made: ", Tone.BAD), inert(report.message))]
    blocks: list[Block] = []
    if report.error:
        blocks.append(line(("The code raised ", Tone.BAD), inert(report.error),
                           " — the view shows what it had bound by then." if report.view else ""))
    if report.view is not None:
        blocks.extend(view_blocks(report.view))
    return blocks


def viewable_names(*sources: str) -> tuple[str, ...]:
    """The names a view can be asked of: what the code binds, read from its text (not its imports,
    nor the private names a harness would use), in a stable order for the prompt to list."""
    names = frozenset().union(*(bound_names(source, imports=False) for source in sources if source))
    return tuple(sorted(n for n in names if not n.startswith("_")))
