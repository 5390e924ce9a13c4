"""Running snippets out of process. The parent side imports neither torch nor Textual."""

from tutor.sandbox.client import RunResult, Sandbox, run_sync
from tutor.sandbox.protocol import AskSpec, ErrorInfo, Observation, RunRequest

__all__ = ["AskSpec", "ErrorInfo", "Observation", "RunRequest", "RunResult", "Sandbox", "run_sync"]
