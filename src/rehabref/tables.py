"""Imports every table module so ``Base.metadata`` is complete (migrations, tests)."""

from __future__ import annotations

from rehabref.care import models as _care  # noqa: F401
from rehabref.db import Base
from rehabref.eligibility import models as _eligibility  # noqa: F401
from rehabref.events import models as _events  # noqa: F401
from rehabref.idempotency import models as _idempotency  # noqa: F401
from rehabref.instance_secret import InstanceSetting as _InstanceSetting  # noqa: F401
from rehabref.intake import models as _intake  # noqa: F401
from rehabref.links import models as _links  # noqa: F401
from rehabref.matching import models as _matching  # noqa: F401
from rehabref.ops import models as _ops  # noqa: F401
from rehabref.partners import models as _partners  # noqa: F401
from rehabref.referrals import models as _referrals  # noqa: F401
from rehabref.sandbox import models as _sandbox  # noqa: F401

metadata = Base.metadata
