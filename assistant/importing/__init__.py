"""Ingest → knowledge bank: the Importer (importer.py), resumable and incremental, and the sweep
after it (import_sweep.py) that removes deleted mail and follows moved mail; moved notes are
followed as they are read (note_moves.py)."""
