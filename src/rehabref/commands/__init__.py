"""Edge: sub-commands of the ``rehabref`` CLI that belong to one domain's registry."""
