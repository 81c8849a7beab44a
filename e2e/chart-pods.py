#!/usr/bin/env python3
"""Prints each Pod template of a rendered chart (Deployments, StatefulSets, DaemonSets, Jobs)
as a Pod of its own, for checks that look at Pods: `celer apply` with the Pod Security set
(scripts/chart.sh) and the API server's Pod Security admission (e2e/chart.sh).

    e2e/chart-pods.py RENDERED.yaml > pods.yaml
"""
import sys

import yaml

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


def main(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    pods = []
    for doc in docs:
        if doc.get("kind") not in WORKLOADS:
            continue
        template = doc["spec"]["template"]
        meta = dict(template.get("metadata") or {})
        meta["name"] = doc["metadata"]["name"]
        meta["namespace"] = doc["metadata"].get("namespace", "default")
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]})
    if not pods:
        sys.exit(f"{path}: no Pod template rendered")
    yaml.safe_dump_all(pods, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main(sys.argv[1])
