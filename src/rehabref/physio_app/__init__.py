"""Edge: the physiotherapist app (/app): sign-in by one-time link, visits, check-in/out."""
