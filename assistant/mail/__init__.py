"""What makes mail mail: query terms, dates in words, filters in SQL, one row per mail, threads,
follow-up questions."""
