"""How numbers and figures look: number formatting and the matplotlib helpers shared by the kinds' renderers and the report."""
