"""What makes mail mail: query terms, dates in words, threads, follow-up questions."""
