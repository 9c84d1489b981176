"""Edge: the partner JSON API (``/api/v1/partners/...``). Endpoints call workflows, domain
services and stores; nothing below the edge imports this package."""
