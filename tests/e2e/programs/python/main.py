"""The e2e Python program: one lookup through the generated SDK (sdk/python, installed as pulumi_cloud), in both
forms, run by the real engine (the pinned pulumi CLI on PATH) as an Automation API inline program (the
pulumi-language-python host is a Go module that cannot be fetched here; an inline program needs none).

Usage: python main.py WORK_DIR STACK SERVICE [--destroy]

WORK_DIR holds Pulumi.yaml and the stack, whose config (cloud:serviceManagementCustomEndpoint, secret
cloud:accessToken) the caller has set. Prints the stack outputs as JSON on the last line of stdout.
"""

import json
import sys

import pulumi
from pulumi import automation as auto
from pulumi_cloud import endpoints

CONSUMER_ROLE = "roles/servicemanagement.serviceConsumer"


def program(service: str):
    def run() -> None:
        # Direct form: a plain result.
        direct = endpoints.get_service_iam_policy(service_name=service)
        pulumi.export("directId", direct.id)
        pulumi.export("directEtag", direct.etag)
        pulumi.export("directPolicyData", direct.policy_data)
        # Output form: structured bindings, no JSON parsing.
        out = endpoints.get_service_iam_policy_output(service_name=service)
        pulumi.export(
            "consumers",
            out.bindings.apply(lambda bs: sorted(m for b in bs if b.role == CONSUMER_ROLE for m in b.members)),
        )

    return run


def main() -> None:
    work_dir, stack_name, service = sys.argv[1:4]
    destroy = "--destroy" in sys.argv[4:]
    ws = auto.LocalWorkspace(work_dir=work_dir, program=program(service))
    stack = auto.Stack.select(stack_name, ws)
    if destroy:
        stack.destroy(on_output=lambda line: print(line, file=sys.stderr))
        return
    result = stack.up(on_output=lambda line: print(line, file=sys.stderr))
    print(json.dumps({k: {"value": v.value, "secret": v.secret} for k, v in result.outputs.items()}))


if __name__ == "__main__":
    main()
