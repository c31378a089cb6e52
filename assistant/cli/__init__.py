"""Presentation for the shell: the argument parser and `main` (cli.py, imports lazy so that
`assistant --help` answers at once), one module per group of commands (commands.py,
commands_mail.py, commands_night.py, commands_model.py) and what they print (output.py,
answer_output.py, listing.py; streams.py: stdout as the shell gives it). Decides nothing.
`main` is the console script's entry point."""

from assistant.cli.cli import main

__all__ = ["main"]
