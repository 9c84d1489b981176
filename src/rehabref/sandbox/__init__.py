"""Edge: the sandbox (spec 6.5): test phones, scenario jobs, synthetic coverage and the
webhook trigger. Wired in at start-up (``rehabref.wiring``); nothing below the edge imports it."""
