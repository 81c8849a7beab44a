#!/usr/bin/env python3
"""Writes N contract-like ValidatingAdmissionPolicies, each with its binding, for the
side-by-side's growth runs (e2e/side-by-side.sh; docs/benchmarks.md, "Through kube-apiserver").

    e2e/policies-gen.py N FILE

Policy i (policy-bench-gen-000 ... ) is the bench contract's validation with two distinct
twists so no two policies are the same expression: it requires policy-bench-team: platform
and the absence of an annotation policy-bench-deny-<i>. Each matches Pod CREATE and UPDATE,
and its binding (validationActions [Deny]) selects the contract's Pods: namespace
policy-bench, label policy-bench-subject: "true". So every policy is evaluated in full on
every bench Pod, and each admits it (the generated Pods carry the team annotation); a Pod
without the annotation is denied by all of them.
"""
import sys


def policy(i: int) -> str:
    name = f"policy-bench-gen-{i:03d}"
    return f"""---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["pods"]
  validations:
  - expression: >-
      has(object.metadata.annotations) &&
      'policy-bench-team' in object.metadata.annotations &&
      object.metadata.annotations['policy-bench-team'] == 'platform' &&
      !('policy-bench-deny-{i:03d}' in object.metadata.annotations)
    message: "{name}: policy-bench-team annotation must equal platform"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {name}
spec:
  policyName: {name}
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: policy-bench
    objectSelector:
      matchLabels:
        policy-bench-subject: "true"
"""


def main() -> int:
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    n = int(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        out.write(f"# {n} generated policies: e2e/policies-gen.py {n} FILE\n")
        for i in range(n):
            out.write(policy(i))
    return 0


if __name__ == "__main__":
    sys.exit(main())
