"""Fixtures: a coordinator token, and the channel tests' server wired to provider
stand-ins (for withdrawal by link and by STOP)."""

from tests.channels.conftest import api, graph, live_server, smtp, twilio  # noqa: F401
from tests.support.operators import operator_token  # noqa: F401
