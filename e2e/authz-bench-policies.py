#!/usr/bin/env python3
"""AuthorizationPolicies for e2e/bench-authz.sh (issue 19's targets): CEL policies spread over
ten resources the authorization mix touches or not, and Rego policies whose modules hold
several deny rules each.

    e2e/authz-bench-policies.py [--cel 50] [--rego 4] [--rules 5] [--other 0] > policies.yaml

Every CEL policy has a matchCondition, a variable and two rules (a Deny for a frozen namespace
of its own, a Deny for a blocked user of its own); the bench's users and namespaces (bench-user-N,
team-N) meet none of them, except policy 3's rule (its first on Deployments) that protects team-7's Deployments from
deletion by other teams (so some reviews of the mix are denied, as in a real cluster).
`--other N` adds N policies for resources the mix never asks about (`widgets.example.com`):
they cost nothing if the index works.
"""
import argparse

RESOURCES = [
    ("", "pods"), ("", "services"), ("", "namespaces"), ("apps", "deployments"),
    ("", "configmaps"), ("", "secrets"), ("", "persistentvolumeclaims"),
    ("networking.k8s.io", "ingresses"), ("batch", "cronjobs"),
    ("rbac.authorization.k8s.io", "roles"),
]


def q(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def cel_policy(i, group, resource):
    team_rule = ""
    if i == 3:  # the first Deployments policy
        team_rule = """  - name: team-7-deployments
    expression: >-
      request.resourceAttributes.resource == 'deployments' &&
      request.resourceAttributes.verb == 'delete' &&
      request.resourceAttributes.namespace == 'team-7' && variables.team != 'bench:team-3'
    decision: Deny
    messageExpression: "'only team 3 deletes Deployments in team-7, not ' + request.user"
"""
    return f"""apiVersion: authorization.celer.dev/v1alpha1
kind: AuthorizationPolicy
metadata:
  name: bench-cel-{i}
spec:
  match:
    resources:
    - apiGroups: [{q(group)}]
      resources: [{resource}]
      verbs: ["*"]
  matchConditions:
  - name: resource-request
    expression: "has(request.resourceAttributes)"
  variables:
  - name: team
    expression: >-
      request.groups.exists(g, g.startsWith('bench:team-'))
      ? request.groups.filter(g, g.startsWith('bench:team-'))[0] : ''
  rules:
{team_rule}  - name: frozen-{i}
    expression: >-
      has(request.resourceAttributes.namespace) &&
      request.resourceAttributes.namespace == 'frozen-{i}' &&
      request.resourceAttributes.verb in ['create', 'update', 'patch', 'delete']
    decision: Deny
    messageExpression: "'namespace frozen-{i} is frozen; ' + request.user + ' may only read it'"
  - name: blocked-{i}
    expression: "request.user == 'blocked-user-{i}'"
    decision: Deny
    message: blocked-user-{i} is suspended
"""


def rego_policy(k, rules):
    group, resource = RESOURCES[k % 4]
    body = [f"package bench.rego{k}", ""]
    for j in range(rules):
        body += [
            "deny[reason] {",
            f'  input.spec.resourceAttributes.resource == "{resource}"',
            f'  startswith(input.spec.resourceAttributes.namespace, "quarantine-{k}-{j}")',
            '  not input.spec.resourceAttributes.verb == "get"',
            f'  reason := sprintf("namespace %s is quarantined (rule {j})", [input.spec.resourceAttributes.namespace])',
            "}",
            "",
        ]
    module = "\n".join("    " + line if line else "" for line in body)
    return f"""apiVersion: authorization.celer.dev/v1alpha1
kind: AuthorizationPolicy
metadata:
  name: bench-rego-{k}
spec:
  match:
    resources:
    - apiGroups: [{q(group)}]
      resources: [{resource}]
      verbs: ["*"]
  rego: |
{module}
"""


def other_policy(i):
    return f"""apiVersion: authorization.celer.dev/v1alpha1
kind: AuthorizationPolicy
metadata:
  name: bench-other-{i}
spec:
  match:
    resources:
    - apiGroups: [example.com]
      resources: [widgets-{i}]
      verbs: ["*"]
  rules:
  - name: deny
    expression: "request.user == 'blocked-user-{i}'"
    decision: Deny
    message: no widgets-{i} for blocked-user-{i}
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cel", type=int, default=50)
    parser.add_argument("--rego", type=int, default=4)
    parser.add_argument("--rules", type=int, default=5)
    parser.add_argument("--other", type=int, default=0)
    args = parser.parse_args()
    docs = [cel_policy(i, *RESOURCES[i % len(RESOURCES)]) for i in range(args.cel)]
    docs += [rego_policy(k, args.rules) for k in range(args.rego)]
    docs += [other_policy(i) for i in range(args.other)]
    print("---\n".join(docs), end="")


if __name__ == "__main__":
    main()
