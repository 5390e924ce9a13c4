"""The Textual user interface. The only part of the tutor that imports Textual."""
