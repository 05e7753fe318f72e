"""Text analysis below every engine part: keyword terms (English stems, Chinese words, numbers) and token
counts. Ingest, recall, lifecycle and the stores all read text the same way, so it lives under all of them."""
