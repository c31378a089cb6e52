"""The Textual app that bare `assistant` opens (imported only by the CLI)."""
