"""The user's answer path: Answerer (answerer.py), the mail's own lines that answer (evidence.py),
whether a shown sentence stands in them (support.py), and the one text analysis they share
(text.py)."""
