"""Edge: the OpenAPI document, assembled from the operations each area describes here."""
