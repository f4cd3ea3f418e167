"""Hand-written helpers the chapters use: exercises, timelines, figures, the explorer and a temporary PostgreSQL server. Nothing here is exported from a chapter."""
