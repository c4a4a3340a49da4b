"""One conformance scenario, driven through Google's Python client (google-api-python-client).

Usage: python scenario.py ROOT_URL TOKEN SERVICE PRODUCER_PROJECT
Prints one JSON object: what each call returned (or the HTTP status and Google status of its error).
The same scenario runs through the googleapis Node client in conformance.test.ts; the two must agree.
"""
import json
import sys

from google.oauth2.credentials import Credentials
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError


def main() -> None:
    root, token, service, producer = sys.argv[1:5]
    api = build(
        "servicemanagement", "v1",
        credentials=Credentials(token),
        client_options={"api_endpoint": root},
        static_discovery=True,
        cache_discovery=False,
    )
    services = api.services()
    consumers = services.consumers()
    resource = f"services/{service}"
    consumer = f"{resource}/consumers/consumer-project-1"
    out = {}

    def attempt(name, request):
        try:
            out[name] = request.execute()
        except HttpError as e:
            body = json.loads(e.content.decode("utf-8"))
            out[name] = {"httpStatus": e.resp.status, "status": body["error"]["status"]}
        return out[name]

    attempt("create", services.create(body={"serviceName": service, "producerProjectId": producer}))
    attempt("get", services.get(serviceName=service))
    attempt("list", services.list(producerProjectId=producer))
    policy = {
        "version": 3,
        "bindings": [
            {"role": "roles/servicemanagement.serviceConsumer", "members": ["user:alice@example.com"]},
            {
                "role": "roles/servicemanagement.serviceConsumer",
                "members": ["group:readers@example.com"],
                "condition": {"title": "until-2030", "expression": 'request.time < timestamp("2030-01-01T00:00:00Z")'},
            },
        ],
    }
    first = attempt("setIamPolicy", services.setIamPolicy(resource=resource, body={"policy": policy}))
    attempt("getIamPolicy", services.getIamPolicy(resource=resource, body={"options": {"requestedPolicyVersion": 3}}))
    attempt("getIamPolicyV1", services.getIamPolicy(resource=resource, body={}))
    attempt("testIamPermissions", services.testIamPermissions(
        resource=resource, body={"permissions": ["servicemanagement.services.get", "storage.buckets.get"]}))
    # A second write with the first write's etag, after another write moved it on: 409 ABORTED.
    attempt("setAgain", services.setIamPolicy(resource=resource, body={"policy": dict(policy, etag=first["etag"])}))
    attempt("setStale", services.setIamPolicy(resource=resource, body={"policy": dict(policy, etag=first["etag"])}))
    attempt("consumerSet", consumers.setIamPolicy(resource=consumer, body={"policy": {"bindings": [
        {"role": "roles/servicemanagement.serviceController", "members": ["serviceAccount:esp@consumer-project-1.iam.gserviceaccount.com"]},
    ]}}))
    attempt("consumerGet", consumers.getIamPolicy(resource=consumer, body={"options": {"requestedPolicyVersion": 3}}))
    attempt("consumerTest", consumers.testIamPermissions(
        resource=consumer, body={"permissions": ["servicemanagement.services.get"]}))
    attempt("missing", services.getIamPolicy(resource="services/missing.endpoints.my-project.cloud.goog", body={}))
    attempt("badRequest", services.setIamPolicy(resource=resource, body={"policy": {"bindings": [{"role": "roles/a", "members": ["user:a@example.com"]}]}}))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
