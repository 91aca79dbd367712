"""Assembly: the bundle pipeline, budgets, the five passes and rendering."""
