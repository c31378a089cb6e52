"""Idle-time precompute: the job runner (runner.py) and what each kind of job does (handlers.py);
the night's timer (timer.py) and the user's presence (activity.py). This file imports nothing,
so that a part that only needs `activity` or `timer` does not load the runner."""
