#!/usr/bin/env python3
"""Server-side applies policy manifests to the e2e control plane against celer's CRDs, with
strict field validation (an unknown or misspelt field is refused, as `kubectl apply` refuses
it), and checks that the stored object is the manifest unchanged (nothing pruned, nothing
defaulted). Prints each refusal with the API server's reason, a line per corpus folder, and
`crds: N accepted, M refused` last.

    e2e/crds-apply.py CRDS_JSON LABEL=FILE_OR_DIR...

CRDS_JSON is `celer crds --output json` (it gives each kind's plural and scope); LABEL names
a group of manifests in the report (repeat it to add
paths to the group). Only documents of the CRDs' kinds are applied. Reads
CELER_E2E_SERVER, CELER_E2E_TOKEN and CELER_E2E_CA; needs Python 3 with PyYAML.
"""
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml

SERVER = os.environ["CELER_E2E_SERVER"]
TOKEN = os.environ["CELER_E2E_TOKEN"]
CONTEXT = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])
MANAGER = "celer-e2e-crds"


def call(method, path, body=None, content_type="application/json"):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(SERVER + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + TOKEN)
    req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, context=CONTEXT) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def kinds(crds_json):
    """(apiVersion, kind) -> (plural, namespaced) for every served version."""
    with open(crds_json) as fh:
        items = json.load(fh)["items"]
    out = {}
    for crd in items:
        spec = crd["spec"]
        for version in spec["versions"]:
            key = (spec["group"] + "/" + version["name"], spec["names"]["kind"])
            out[key] = (spec["names"]["plural"], spec["scope"] == "Namespaced")
    return out


def documents(path):
    files = [path]
    if os.path.isdir(path):
        files = []
        for root, dirs, names in os.walk(path):
            # Test fixtures (.kyverno-test, .chainsaw-test) are not the policies.
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            files += [
                os.path.join(root, f)
                for f in sorted(names)
                if f.endswith((".yaml", ".yml")) and not f.startswith("artifacthub-pkg")
            ]
    for name in files:
        with open(name) as fh:
            for doc in yaml.safe_load_all(fh):
                if isinstance(doc, dict):
                    yield name, doc


namespaces = set()


def ensure_namespace(name):
    if name in namespaces:
        return
    status, body = call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    if status not in (201, 409):
        sys.exit(f"crds-apply: namespace {name}: {status} {body.get('message', body)}")
    namespaces.add(name)


def apply(doc, plural, namespaced):
    """None when accepted unchanged, else the reason."""
    group_version = doc["apiVersion"]
    meta = doc.get("metadata") or {}
    path = "/apis/" + group_version
    if namespaced:
        namespace = meta.get("namespace") or "default"
        ensure_namespace(namespace)
        path += "/namespaces/" + namespace
    path += "/" + plural + "/" + urllib.parse.quote(meta.get("name", ""))
    query = urllib.parse.urlencode({"fieldManager": MANAGER, "fieldValidation": "Strict", "force": "true"})
    status, body = call("PATCH", path + "?" + query, doc, "application/apply-patch+yaml")
    if status not in (200, 201):
        return f"HTTP {status}: {body.get('message', body)}"
    for field in ("spec",):
        if body.get(field) != doc.get(field):
            return f"stored {field} differs from the manifest (pruned or defaulted)"
    return None


def main():
    known = kinds(sys.argv[1])
    accepted = refused = 0
    report = {}
    for arg in sys.argv[2:]:
        label, _, path = arg.partition("=")
        ok, bad = report.get(label, (0, 0))
        for name, doc in documents(path):
            key = (doc.get("apiVersion"), doc.get("kind"))
            if key not in known:
                continue
            reason = apply(doc, *known[key])
            if reason is None:
                ok += 1
            else:
                bad += 1
                what = f"{doc.get('kind')} {(doc.get('metadata') or {}).get('name')}"
                print(f"refused {label}: {what} ({os.path.relpath(name, path)}): {reason}")
        report[label] = (ok, bad)
    for label, (ok, bad) in report.items():
        print(f"crds {label}: {ok} accepted, {bad} refused")
        accepted += ok
        refused += bad
    print(f"crds: {accepted} accepted, {refused} refused")


if __name__ == "__main__":
    main()
