"""Assembly: budgets, the five passes, rendering and the result shapes."""
