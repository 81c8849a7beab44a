#!/usr/bin/env python3
"""Material for e2e/growth.sh (issue 15 item 4): how the cost of one admission grows with
policies that do not match, at several request sizes.

    e2e/growth.py policies K OUT.yaml   one ValidatingAdmissionPolicy that matches the bench
                                        Pods (namespace policy-bench) and K that do not, each
                                        with its Deny binding: even ones are for ConfigMaps,
                                        odd ones are for Pods but bound to a namespace that
                                        does not exist (so matching has to look past them)
    e2e/growth.py bodies BYTES OUT.jsonl  64 Pods (JSON objects, one per line) of about BYTES
                                        bytes each, padded with container env values

The matching policy reads the object (`object.metadata.name != ''`) and admits every body.
"""
import json
import sys


def policy(name, resources, namespace, expression):
    return [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
         "metadata": {"name": name},
         "spec": {"failurePolicy": "Fail",
                  "matchConstraints": {"resourceRules": [{
                      "apiGroups": [""], "apiVersions": ["v1"],
                      "operations": ["CREATE", "UPDATE"], "resources": resources}]},
                  "validations": [{"expression": expression, "message": f"{name} denies"}]}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
         "metadata": {"name": name},
         "spec": {"policyName": name, "validationActions": ["Deny"],
                  "matchResources": {"namespaceSelector": {"matchLabels": {
                      "kubernetes.io/metadata.name": namespace}}}}},
    ]


def policies(k, out):
    docs = policy("growth-match", ["pods"], "policy-bench", "object.metadata.name != ''")
    for i in range(k):
        if i % 2 == 0:
            docs += policy(f"growth-other-{i}", ["configmaps"], "policy-bench",
                           f"!has(object.data) || !('growth-{i}' in object.data)")
        else:
            docs += policy(f"growth-other-{i}", ["pods"], f"growth-nowhere-{i}",
                           f"object.metadata.name != 'growth-{i}'")
    with open(out, "w") as f:
        for d in docs:
            f.write("---\n" + json.dumps(d) + "\n")


def pod(n, size):
    def build(pad):
        containers = []
        per = 60_000
        chunks = max(1, -(-pad // per)) if pad > 0 else 1
        for c in range(chunks):
            value = "x" * (min(per, pad - c * per) if pad > 0 else 0)
            containers.append({
                "name": f"app-{c}", "image": f"registry.example/growth/app:1.{n}",
                "env": [{"name": "GROWTH_PADDING", "value": value}],
                "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True,
                                    "capabilities": {"drop": ["ALL"]},
                                    "seccompProfile": {"type": "RuntimeDefault"}}})
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"growth-{n}", "namespace": "policy-bench",
                             "labels": {"policy-bench-subject": "true"}},
                "spec": {"automountServiceAccountToken": False, "containers": containers}}
    base = len(json.dumps(build(0), separators=(",", ":")))
    obj = build(max(0, size - base))
    # The chunking adds a few bytes per container; trim the last value to land on the size.
    over = len(json.dumps(obj, separators=(",", ":"))) - size
    if over > 0 and size > base:
        last = obj["spec"]["containers"][-1]["env"][0]
        last["value"] = last["value"][:max(0, len(last["value"]) - over)]
    return obj


def bodies(size, out):
    with open(out, "w") as f:
        for n in range(64):
            f.write(json.dumps(pod(n, size), separators=(",", ":")) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "policies":
        policies(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "bodies":
        bodies(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)
