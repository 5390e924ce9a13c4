"""Render observed values (the sandbox's typed JSON) as short, inert text."""

from __future__ import annotations

from typing import Any

from tutor.judge.compare import render
from tutor.safe_text import inert


def describe_briefly(value: Any, depth: int = 0) -> str:
    """One line: ``tensor (2, 3) torch.float32 stride (3, 1) …`` or a plain value."""
    if not isinstance(value, dict):
        return "?"
    t = value.get("type")
    if t == "tensor":
        parts = [f"tensor {render('shape', tuple(value.get('shape', [])))} {value.get('dtype')}"]
        if "stride" in value:
            parts.append(f"stride {render('stride', tuple(value['stride']))}")
        if value.get("storage_offset"):
            parts.append(f"offset {value['storage_offset']}")
        if value.get("device") not in (None, "cpu"):
            parts.append(str(value["device"]))
        if value.get("requires_grad"):
            parts.append("requires_grad")
        if value.get("grad_fn"):
            parts.append(f"grad_fn={value['grad_fn']}")
        if value.get("is_contiguous") is False:
            parts.append("non-contiguous")
        if value.get("shares_storage_with"):
            parts.append("shares storage with " + ", ".join(value["shares_storage_with"]))
        if "values" in value:
            parts.append("= " + render("tensor", value["values"]))
        if isinstance(value.get("grad"), dict):
            parts.append("grad " + render("tensor", value["grad"].get("values", "…")))
        return inert(" ".join(parts))
    if t == "none":
        return "None"
    if t in ("bool", "int", "float"):
        return str(value.get("value"))
    if t == "str":
        return inert(repr(value.get("value", "")))
    if t in ("dtype", "device"):
        return inert(str(value.get("value")))
    if t in ("tuple", "list", "size", "set"):
        if depth > 3:
            return "…"
        inner = ", ".join(describe_briefly(i, depth + 1) for i in value.get("items", []))
        more = " …" if value.get("truncated") else ""
        if t == "size":
            return f"torch.Size([{inner}])"
        opening, closing = {"tuple": "()", "list": "[]", "set": "{}"}[t]
        return f"{opening}{inner}{more}{closing}"
    if t == "dict":
        if depth > 3:
            return "{…}"
        inner = ", ".join(f"{inert(k)!r}: {describe_briefly(v, depth + 1)}" for k, v in value.get("items", []))
        return "{" + inner + "}"
    if t == "exception":
        return inert(f"{value.get('name')}: {value.get('message', '')}")
    return inert(f"<{value.get('class', t)}>")
