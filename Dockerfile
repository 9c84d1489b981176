# Production image: build the wheel with its pinned runtime dependencies in one stage, run as
# an unprivileged user in the next. Not built in CI (docs/operations.md#container-image).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
COPY migrations ./migrations
RUN python -m venv /opt/rehabref \
 && /opt/rehabref/bin/pip install --no-cache-dir uv==0.13.9 \
 && /opt/rehabref/bin/uv pip install --no-cache --python /opt/rehabref/bin/python -e . \
 && /opt/rehabref/bin/pip uninstall -y uv

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home /var/lib/rehabref --create-home rehabref
# Editable install: `rehabref migrate` finds migrations/ beside src/ (rehabref/migrate.py).
COPY --from=build /opt/rehabref /opt/rehabref
COPY --from=build /src /src
USER rehabref
WORKDIR /var/lib/rehabref
ENV PATH=/opt/rehabref/bin:$PATH \
    REHABREF_HOST=0.0.0.0 \
    REHABREF_PORT=8000
EXPOSE 8000
# Keys: mount a key file (REHABREF_SECRET_KEY_FILE) or pass REHABREF_SECRET_KEY from a secret
# store; never bake them into the image (docs/security.md#secrets-and-keys).
CMD ["sh", "-c", "rehabref migrate && exec rehabref serve"]
