"""A stage lab's file as the capstone package holds it: the lab's solution, with the edits of a later lab
that extends it (35's KV cache in 32's model.py). Shared by the tests that tie the course to the package."""

from __future__ import annotations

# stage lab -> (the lab that extends its file, lines only that later lab's solution may hold)
EXTENDED = {"build-the-gpt": ("write-the-kv-cache", ("cache.append(k, v)", "tril(past)", "else kv_cache.length"))}


def package_text(lab_id: str, drill: dict, labs: dict) -> str:
    """``drill``'s solution as the package file holds it; ``labs`` maps a lab id to its drill (YAML)."""
    if lab_id not in EXTENDED:
        return drill["solution"]
    later = labs[EXTENDED[lab_id][0]]
    use = next(u for u in later["uses"] if u["lab"].endswith("/" + lab_id))
    code = drill["solution"]
    for edit in use["change"]:
        assert code.count(edit["from"]) == 1, edit["from"]
        code = code.replace(edit["from"], edit["to"])
    return code
