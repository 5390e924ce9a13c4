"""How a `:` command at any plain-mode prompt leaves it: raised by ``PlainTutor.ask``, caught where it lands."""


class Leave(Exception):
    """The learner asked to quit, or the input ended."""


class Skip(Exception):
    """`:skip`: on to the next drill (at the module prompt: the list again)."""


class ToMap(Exception):
    """`:map`: back to the module list."""
