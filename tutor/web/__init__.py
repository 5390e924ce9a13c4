"""The tutor in a browser (textual-serve); no Textual and no torch in this process."""
