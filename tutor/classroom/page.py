"""The live view as a page (``serve-ui``'s ``/class`` in class mode): the same rules, read again at each load.

Self-contained HTML that reloads itself every few seconds; every string is escaped (names come
from a roster or a proxy's header, titles from a course that may be third-party).
"""

from __future__ import annotations

import html

from tutor.classroom.live import IDLE_MINUTES, STUCK_MINUTES, WRONG_RUNS, ClassNow
from tutor.safe_text import inert
from tutor.wording import count

REFRESH_SECONDS = 5


def live_page(now: ClassNow, title: str) -> str:
    e = lambda text: html.escape(inert(str(text)))  # noqa: E731
    rows = []
    for r in now.learners:
        if not r.module:
            state, at = "not started", "—"
        else:
            at = f"{r.module} {r.drill}"
            state = (f"STUCK ({r.why})" if r.stuck else f"idle {r.idle_minutes:.0f} min"
                     if r.idle_minutes >= IDLE_MINUTES else "solved it" if r.solved else "working")
        rows.append(f"<tr class={'stuck' if r.stuck else 'ok'}><td>{e(r.name)}</td><td>{e(at)}</td>"
                    f"<td>{r.attempts}</td><td>{r.wrong}</td><td>{r.minutes:.0f}</td><td>{e(state)}</td></tr>")
    stuck_at = "; ".join(f"{e(d)} ({n})" for d, n in now.stuck_at) or "nobody is stuck"
    wrong = "; ".join(f"{e(t)} ({n})" for t, n in now.misconceptions) or "none"
    left = "".join(f"<li>{e(line)}</li>" for line in now.refused)
    style = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}table{border-collapse:"
             "collapse;width:100%}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f3f3f3}"
             "tr.stuck td{background:#fde2dd;font-weight:600}.dim{color:#666}")
    return (f"<!DOCTYPE html><html><head><meta charset=utf-8><meta http-equiv=refresh content={REFRESH_SECONDS}>"
            f"<title>{e(title)}: the class now</title><style>{style}</style></head><body>"
            f"<h1>{e(title)} — the class now</h1>"
            f"<p>{now.at.astimezone():%H:%M:%S}: {count(len(now.learners), 'learner')}, {len(now.stuck)} stuck. "
            f"<span class=dim>Read again every {REFRESH_SECONDS} s.</span></p>"
            "<table><thead><tr><th>learner</th><th>now at</th><th>attempts</th><th>wrong</th><th>minutes</th>"
            f"<th>state</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"<p><b>Stuck at:</b> {stuck_at}</p><p><b>Misconceptions in the last hour:</b> {wrong}</p>"
            f"<p class=dim>Stuck: not yet right on the current drill after {WRONG_RUNS} wrong attempts or "
            f"{STUCK_MINUTES:g} minutes; idle after {IDLE_MINUTES:g} minutes without an attempt (never stuck).</p>"
            + (f"<p>Left out:</p><ul>{left}</ul>" if left else "") + "</body></html>")
