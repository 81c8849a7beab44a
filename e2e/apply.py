#!/usr/bin/env python3
"""Applies YAML or JSON manifests to the e2e control plane, as `kubectl apply` would for the
kinds the tests use: each document is created, or replaced when it exists. The REST path of a
kind comes from the API server's discovery. `delete` removes the documents' objects instead.

    e2e/apply.py [apply|delete] FILE_OR_DIR...

Reads CELER_E2E_SERVER, CELER_E2E_TOKEN and CELER_E2E_CA (see `e2e/control-plane.sh env`).
Needs Python 3 with PyYAML.
"""
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

import yaml

SERVER = os.environ["CELER_E2E_SERVER"]
TOKEN = os.environ["CELER_E2E_TOKEN"]
CONTEXT = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])
_discovery = {}


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(SERVER + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + TOKEN)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, context=CONTEXT) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def resource(api_version, kind):
    base = "/api/v1" if api_version == "v1" else "/apis/" + api_version
    if base not in _discovery:
        status, body = call("GET", base)
        if status != 200:
            sys.exit(f"apply: discovery of {api_version} failed: {status} {body}")
        _discovery[base] = body.get("resources", [])
    for r in _discovery[base]:
        if r.get("kind") == kind and "/" not in r.get("name", ""):
            return base, r["name"], r.get("namespaced", False)
    sys.exit(f"apply: the API server does not serve {api_version} {kind}")


def documents(paths):
    for path in paths:
        files = [path]
        if os.path.isdir(path):
            files = sorted(
                os.path.join(root, f)
                for root, _, names in os.walk(path)
                for f in names
                if f.endswith((".yaml", ".yml", ".json"))
            )
        for name in files:
            with open(name) as fh:
                for doc in yaml.safe_load_all(fh):
                    if doc:
                        yield name, doc


def main():
    args = sys.argv[1:]
    action = "apply"
    if args and args[0] in ("apply", "delete"):
        action, args = args[0], args[1:]
    failed = 0
    for name, doc in documents(args):
        base, plural, namespaced = resource(doc["apiVersion"], doc["kind"])
        meta = doc.setdefault("metadata", {})
        collection = base
        if namespaced:
            collection += "/namespaces/" + meta.setdefault("namespace", "default")
        collection += "/" + plural
        item = collection + "/" + meta["name"]
        what = f"{doc['kind']} {meta['name']}"
        if action == "delete":
            status, body = call("DELETE", item)
            ok = status in (200, 202, 404)
        else:
            status, body = call("POST", collection, doc)
            if status == 409:
                status, current = call("GET", item)
                meta["resourceVersion"] = current.get("metadata", {}).get("resourceVersion")
                status, body = call("PUT", item, doc)
            ok = status in (200, 201)
        if not ok:
            failed += 1
            print(f"apply: {action} {what} ({name}): {status} {body.get('message', body)}", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
