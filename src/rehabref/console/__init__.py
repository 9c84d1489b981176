"""Edge: the coordinator console, server-rendered pages behind an operator login (/console)."""
