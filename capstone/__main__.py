"""`python -m capstone <stage>`: the same CLI as `pytorch-tutor capstone <stage>`."""

from capstone.cli import main

raise SystemExit(main(prog="python -m capstone"))
