"""The command line's subcommands that are more than a front end's launch (``tutor.cli`` dispatches to them).

* ``validation``: ``validate`` (schema, graph, giveaways; imports no sandbox);
* ``authoring``: ``check`` (run every claim) and the service authors' tools share;
* ``try_submission``: ``try`` (one submission against a lab or a repair);
* ``snippet_report``: ``run`` (a snippet file in the sandbox);
* ``profile``: ``progress``, ``stats``, ``review``, ``profile export/import``;
* ``capstone_mine`` and ``capstone_driver``: ``capstone --package mine`` (the learner's own package, in the sandbox).
"""
