"""Client libraries generated from the partner OpenAPI document: ``clients/python`` and
``clients/typescript`` (``python -m rehabref.openapi.clients [OUT_DIR]``, docs/clients.md).

Threat: a client that drifts from the API fails partners at run time. The generated files are
kept in the repository and a test regenerates them and fails on any difference; each client
runs the README walkthrough against a live server in the tests.
"""
