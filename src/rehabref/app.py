"""Application factory: routes, error handlers, start-up and shutdown."""

from __future__ import annotations

import gc
from functools import partial
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.contrib.jinja import JinjaTemplateEngine
from litestar.exceptions import HTTPException
from litestar.template.config import TemplateConfig
from litestar.types import ASGIApp

from rehabref import health, transport_security, wiring
from rehabref.api import authentication as partner_authentication
from rehabref.api import care as care_endpoints
from rehabref.api import commission as commission_endpoints
from rehabref.api import eligibility as eligibility_endpoints
from rehabref.api import events as event_endpoints
from rehabref.api import links as link_endpoints
from rehabref.api import referrals as referral_endpoints
from rehabref.api import report_link_auth
from rehabref.api.audit_reads import record_api_read
from rehabref.audit.read_group import ReadRecorder
from rehabref.config import Settings, load_settings
from rehabref.console import routes as console_routes
from rehabref.db import Database
from rehabref.errors import ApiError, handle_api_error, handle_http_exception, handle_unexpected
from rehabref.events import worker as delivery_worker
from rehabref.idempotency.flow import IdempotentCreates
from rehabref.instance_secret import secret_box
from rehabref.logging import configure_logging
from rehabref.openapi import document as openapi_document
from rehabref.openapi import reference_page
from rehabref.ops import audit_endpoints as audit_ops_endpoints
from rehabref.ops import auth as operator_authentication
from rehabref.ops import (
    calendar_feed_endpoints,
    matching_endpoints,
    payer_invoice_endpoints,
    scheduling_endpoints,
)
from rehabref.ops import care_endpoints as care_ops_endpoints
from rehabref.ops import commission_endpoints as commission_ops_endpoints
from rehabref.ops import endpoints as ops_endpoints
from rehabref.ops import event_endpoints as event_ops_endpoints
from rehabref.ops import payment_endpoints as payment_ops_endpoints
from rehabref.ops import rights_endpoints as rights_ops_endpoints
from rehabref.pages import assistant as intake_pages
from rehabref.pages import pay as pay_pages
from rehabref.pages import referral_link as link_pages
from rehabref.pages import tracking as tracking_pages
from rehabref.pages import withdrawal as withdrawal_pages
from rehabref.partners.auth import Authenticator
from rehabref.physio_app import calendar_pages as physio_calendar_pages
from rehabref.physio_app import pages as physio_pages
from rehabref.plain_asgi import Authentication, PlainRouter
from rehabref.provider_webhooks import paystack as paystack_webhooks
from rehabref.provider_webhooks import twilio as twilio_webhooks
from rehabref.provider_webhooks import whatsapp as whatsapp_webhooks
from rehabref.rate_limiting import RateLimiter
from rehabref.request_context import RequestContextMiddleware
from rehabref.sandbox import checkout as sandbox_checkout
from rehabref.sandbox import trigger as sandbox_trigger
from rehabref.services import Services
from rehabref.workflows.create_store import create_store

TEMPLATES = Path(__file__).parent / "templates"


def create_app(settings: Settings | None = None, *, run_worker: bool = False) -> Litestar:
    """``run_worker``: run the webhook delivery worker in this process too."""
    settings = settings or load_settings()

    async def start(app: Litestar) -> None:
        db = Database(settings.database_url, hot_path_connections=settings.hot_path_connections)
        box = secret_box(settings)
        rate_limiter = RateLimiter(settings.redis_url)
        coverage = wiring.coverage_sources(box.ring)
        roster = wiring.roster_sources()
        channels = wiring.channel_providers(settings)
        wiring.warn_about_missing_channels(channels)
        messages = wiring.message_worker(db, settings, channels, box)
        paystack = wiring.paystack_client(settings)
        app.state.services = Services(
            settings=settings,
            db=db,
            box=box,
            auth=Authenticator(
                db,
                cache_seconds=settings.auth_cache_seconds,
                rate_limit=settings.rate_limit,
                limiter=rate_limiter,
            ),
            rate_limiter=rate_limiter,
            channels=channels,
            messages=messages,
            coverage=coverage,
            roster=roster,
            create_store=create_store(db, box.ring),
            idempotency=IdempotentCreates(
                db, box.ring, ttl_seconds=settings.idempotency_ttl_seconds
            ),
            read_records=ReadRecorder(db),
            referral_created=wiring.referral_created_hooks(),
            paystack=paystack,
        )
        app.state.delivery_worker = (
            delivery_worker.start_in_process(
                db,
                app.state.services.box,
                settings,
                wiring.periodic_jobs(
                    coverage, roster, messages, ring=box.ring, settings=settings, paystack=paystack
                ),
                partial(wiring.delivery_transport, db, ring=box.ring),
            )
            if run_worker
            else None
        )

    async def stop(app: Litestar) -> None:
        handle = getattr(app.state, "delivery_worker", None)
        if handle is not None:
            await handle.shutdown()
        services: Services | None = getattr(app.state, "services", None)
        if services is not None:
            await services.channels.aclose()
            if services.paystack is not None:
                await services.paystack.aclose()
            await services.db.dispose()

    return Litestar(
        route_handlers=[
            # HTML pages, probes and the API reference; every JSON route is in JSON_ROUTES.
            *health.ROUTES,
            *intake_pages.ROUTES,
            *tracking_pages.ROUTES,
            *withdrawal_pages.ROUTES,
            *link_pages.ROUTES,
            *pay_pages.ROUTES,
            *sandbox_checkout.ROUTES,
            *console_routes.ROUTES,
            *physio_pages.ROUTES,
            *physio_calendar_pages.ROUTES,
            *openapi_document.ROUTES,
            *reference_page.ROUTES,
        ],
        exception_handlers={
            ApiError: handle_api_error,
            HTTPException: handle_http_exception,
            Exception: handle_unexpected,
        },
        on_startup=[start],
        on_shutdown=[stop],
        openapi_config=None,
        template_config=TemplateConfig(directory=TEMPLATES, engine=JinjaTemplateEngine),
        request_max_body_size=settings.max_body_bytes,
        debug=False,
        logging_config=None,
    )


# Every partner and ops JSON route, served by one router in front of Litestar.
JSON_ROUTES = [
    *referral_endpoints.ROUTES,
    *eligibility_endpoints.ROUTES,
    *care_endpoints.ROUTES,
    *link_endpoints.ROUTES,
    *commission_endpoints.ROUTES,
    *event_endpoints.ROUTES,
    *sandbox_trigger.ROUTES,
    *ops_endpoints.ROUTES,
    *matching_endpoints.ROUTES,
    *care_ops_endpoints.ROUTES,
    *scheduling_endpoints.ROUTES,
    *calendar_feed_endpoints.ROUTES,
    *event_ops_endpoints.ROUTES,
    *audit_ops_endpoints.ROUTES,
    *rights_ops_endpoints.ROUTES,
    *commission_ops_endpoints.ROUTES,
    *payer_invoice_endpoints.ROUTES,
    *whatsapp_webhooks.ROUTES,
    *twilio_webhooks.ROUTES,
    *paystack_webhooks.ROUTES,
    *payment_ops_endpoints.ROUTES,
]


# How each route kind's caller is resolved: the router runs the route's one before its handler.
AUTHENTICATIONS: list[Authentication[Any]] = [
    *partner_authentication.AUTHENTICATIONS,
    *operator_authentication.AUTHENTICATIONS,
    *report_link_auth.AUTHENTICATIONS,
]


def serve_json_routes(app: Litestar, settings: Settings) -> ASGIApp:
    return PlainRouter(
        app,
        JSON_ROUTES,
        max_body=settings.max_body_bytes,
        authentications=AUTHENTICATIONS,
        audit=record_api_read,
    )


def build_asgi_app(settings: Settings, *, run_worker: bool) -> ASGIApp:
    """The app a server process serves (``serving.AppFactory`` calls it)."""
    configure_logging(settings.log_level)
    app = RequestContextMiddleware(
        serve_json_routes(create_app(settings, run_worker=run_worker), settings),
        transport_security.response_headers(settings.public_base_url),
    )
    # Long-lived start-up objects (routes, models, compiled schemas) need never be scanned
    # again: freezing them and collecting the young generation less often removed most of
    # the garbage-collector pauses behind p99 latency (docs/performance.md).
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    return app


def asgi_app() -> ASGIApp:
    """Factory for ``uvicorn --factory rehabref.app:asgi_app``: settings from the environment,
    the API only (no delivery worker; run ``rehabref worker`` beside it)."""
    return build_asgi_app(load_settings(), run_worker=False)
