"""An import-linter contract type: these modules (and packages, whole) import only the standard library,
each other, and what is allowed.

import-linter's own contracts forbid listed packages; the inner sandbox's rule is the other way
round (everything outside the standard library is forbidden, torch and its own files allowed), so
that a new dependency cannot slip into the zygote's process by being absent from a list.
"""

from __future__ import annotations

import sys

from importlinter import Contract, ContractCheck, fields, output


class StandardLibraryOnly(Contract):
    type_name = "standard_library_only"

    source_modules = fields.ListField(subfield=fields.ModuleField())
    allowed = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph, verbose: bool) -> ContractCheck:
        allowed = set(self.allowed or ()) | set(sys.stdlib_module_names) | {"__future__"}
        inside = set()
        for module in self.source_modules:  # a package stands for itself and everything in it
            inside.add(module.name)
            if module.name in graph.modules:
                inside |= graph.find_descendants(module.name)
        broken = []
        for source in sorted(inside):
            if source not in graph.modules:
                broken.append((source, "(no such module: update the contract)", None))
                continue
            for imported in sorted(graph.find_modules_directly_imported_by(source)):
                if imported in inside or imported.split(".")[0] in allowed:
                    continue
                lines = [d["line_number"] for d in graph.get_import_details(importer=source, imported=imported)]
                broken.append((source, imported, lines))
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for source, imported, lines in check.metadata["broken"]:
            where = f" (l. {', '.join(map(str, lines))})" if lines else ""
            output.print_error(f"{source} imports {imported}{where}", bold=False)
            output.new_line()
