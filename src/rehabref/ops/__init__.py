"""Edge: the coordinator (ops) JSON API behind operator tokens (``/api/v1/ops/...``)."""
