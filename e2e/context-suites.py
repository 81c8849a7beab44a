#!/usr/bin/env python3
"""Kyverno's context-backed test suites through the cluster path: for each suite, the objects
its mocks stand for (the `context` file's `spec.resources`, the `clusterResources` files and
the CRDs they name) are applied to the e2e API server, `celer test --kubeconfig` runs the
suite with Kyverno's context functions reading that cluster as `celer serve` does (watch
caches, live reads), and the objects are deleted again.

    e2e/context-suites.py CELER_BIN KUBECONFIG SUITE_DIR...

A suite whose mocks stand for something outside the cluster is skipped, with the reason:
images (`spec.images`: public registries this machine cannot reach) and external HTTP
answers (`apiCallResponses`). Prints one line per suite and per failed check, then
`context-suites: N suites, P passed, F failed, S skipped (K suites skipped)`.

Reads CELER_E2E_SERVER, CELER_E2E_TOKEN and CELER_E2E_CA (see `e2e/control-plane.sh env`).
"""
import json
import os
import subprocess
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apply  # noqa: E402  (the e2e API client)


def load(path):
    with open(path) as fh:
        return [d for d in yaml.safe_load_all(fh) if d]


def mocked(test, directory):
    """(crd files, objects, why skipped) the suite's mocks stand for."""
    crds, objects = [], []
    if test.get("apiCallResponses"):
        return crds, objects, "mocks the answers of external HTTP services (apiCallResponses)"
    if test.get("globalContextEntries"):
        return crds, objects, "mocks GlobalContextEntries by value (globalContextEntries)"
    files = list(test.get("clusterResources") or [])
    context = test.get("context")
    for name in ([context] if context else []) + files:
        path = os.path.join(directory, name)
        for doc in load(path):
            if str(doc.get("apiVersion", "")).startswith("cli.kyverno.io/"):
                spec = doc.get("spec") or {}
                if spec.get("images"):
                    return crds, objects, "mocks images of public registries (context spec.images), which this machine cannot reach"
                objects.extend(spec.get("resources") or [])
                crds.extend(os.path.join(os.path.dirname(path), c) for c in spec.get("crds") or [])
            else:
                objects.append(doc)
    return crds, objects, None


def established(name, deadline):
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name
    while time.time() < deadline:
        status, body = apply.call("GET", path)
        conditions = (body.get("status") or {}).get("conditions") or []
        if status == 200 and any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
            return True
        time.sleep(0.2)
    return False


def put(doc):
    """Creates `doc`, or replaces it; returns an error text or None."""
    base, plural, namespaced = apply.resource(doc["apiVersion"], doc["kind"])
    meta = doc.setdefault("metadata", {})
    collection = base
    if namespaced:
        collection += "/namespaces/" + meta.setdefault("namespace", "default")
    collection += "/" + plural
    item = collection + "/" + meta["name"]
    status, body = apply.call("POST", collection, doc)
    if status == 409:
        _, current = apply.call("GET", item)
        meta["resourceVersion"] = (current.get("metadata") or {}).get("resourceVersion")
        status, body = apply.call("PUT", item, doc)
    if status not in (200, 201):
        return f"{doc['kind']} {meta['name']}: HTTP {status}: {body.get('message', body)}"
    return None


def remove(doc):
    base, plural, namespaced = apply.resource(doc["apiVersion"], doc["kind"])
    meta = doc.get("metadata") or {}
    path = base
    if namespaced:
        path += "/namespaces/" + meta.get("namespace", "default")
    apply.call("DELETE", path + "/" + plural + "/" + meta["name"])


def prepare(crds, objects):
    """Applies the CRDs and objects; returns the errors."""
    errors = []
    for path in crds:
        for crd in load(path):
            error = put(crd)
            if error:
                errors.append(error)
            elif not established(crd["metadata"]["name"], time.time() + 30):
                errors.append(f"CRD {crd['metadata']['name']} not Established within 30 s")
    # A new CRD's group is discovered afresh.
    apply._discovery.clear()
    namespaces = {o.get("metadata", {}).get("name") for o in objects if o.get("kind") == "Namespace"}
    for o in objects:
        ns = (o.get("metadata") or {}).get("namespace")
        if ns and ns not in namespaces:
            namespaces.add(ns)
            status, _ = apply.call("GET", "/api/v1/namespaces/" + ns)
            if status == 404:
                error = put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
                if error:
                    errors.append(error)
    for o in sorted(objects, key=lambda o: o.get("kind") != "Namespace"):
        error = put(json.loads(json.dumps(o)))
        if error:
            errors.append(error)
    return errors


def main():
    celer, kubeconfig, suites = sys.argv[1], sys.argv[2], sys.argv[3:]
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    skipped_suites = 0
    for suite in suites:
        directory = os.path.dirname(suite)
        name = os.path.relpath(directory, os.environ.get("CELER_CORPUS", "."))
        test = load(suite)[0]
        crds, objects, why = mocked(test, directory)
        if why:
            skipped_suites += 1
            rows = sum(max(1, len(r.get("resources") or [])) for r in test.get("results") or [])
            totals["skipped"] += rows
            print(f"SKIP {name}: {rows} rows: {why}")
            continue
        errors = prepare(crds, objects)
        run = subprocess.run(
            [celer, "test", "--kubeconfig", kubeconfig, "--output", "json", suite],
            capture_output=True, text=True, timeout=300,
        )
        for o in objects:
            if o.get("kind") != "Namespace":
                remove(o)
        try:
            report = json.loads(run.stdout)
        except ValueError:
            totals["failed"] += 1
            print(f"FAIL {name}: celer test exited {run.returncode}: {run.stderr.strip()[:600]}")
            continue
        summary = report["summary"]
        summary["failed"] += len(errors)
        for key in totals:
            totals[key] += summary[key]
        verdict = "PASS" if summary["failed"] == 0 else "FAIL"
        print(f"{verdict} {name}: {summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped")
        for error in errors:
            print(f"  setup: {error}")
        for s in report["suites"]:
            for check in s.get("checks", []):
                if not check["passed"]:
                    print(f"  failed: {check['name']}: expected {check['expected']!r}, got {check['actual']!r}")
            for error in s.get("errors", []):
                print(f"  error: {error}")
            for row in s.get("skippedChecks", []):
                print(f"  skipped: {row['name']}: {row['reason']}")
    print(
        f"context-suites: {len(suites)} suites, {totals['passed']} passed, {totals['failed']} failed,"
        f" {totals['skipped']} skipped ({skipped_suites} suites skipped)"
    )


if __name__ == "__main__":
    main()
