#!/usr/bin/env python3
"""Server-side applies every object of a rendered chart (or other YAML) to the e2e API server,
as a dry run or for real, and says which ones the API server refused and what it warned.

    e2e/chart-apply.py (--dry-run | --apply) FILE.yaml...

The API server comes from the environment e2e/control-plane.sh prints (CELER_E2E_SERVER,
CELER_E2E_CA, CELER_E2E_TOKEN). Kinds are found through discovery (so CRDs applied before
are known); an object without a namespace in a namespaced kind goes to --namespace. Prints one
line per object and a summary; exits 1 when any object was refused or warned about.
"""
import argparse
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

import yaml


class Api:
    def __init__(self):
        self.server = os.environ["CELER_E2E_SERVER"]
        self.token = os.environ["CELER_E2E_TOKEN"]
        self.ctx = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])

    def call(self, method, path, body=None, ctype="application/json"):
        req = urllib.request.Request(self.server + path, method=method, data=body)
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Content-Type", ctype)
        req.add_header("Accept", "application/json")
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=30) as resp:
                return resp.status, resp.read(), resp.headers.get_all("Warning") or []
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers.get_all("Warning") or []

    def get(self, path):
        status, body, _ = self.call("GET", path)
        if status != 200:
            raise SystemExit(f"GET {path}: HTTP {status}: {body[:300]!r}")
        return json.loads(body)


def discover(api):
    """(apiVersion, kind) -> (path prefix, plural, namespaced)."""
    kinds = {}
    versions = [("/api/v1", "v1")]
    for group in api.get("/apis")["groups"]:
        for v in group["versions"]:
            versions.append((f"/apis/{v['groupVersion']}", v["groupVersion"]))
    for prefix, gv in versions:
        for r in api.get(prefix)["resources"]:
            if "/" in r["name"]:
                continue
            kinds[(gv, r["kind"])] = (prefix, r["name"], r["namespaced"])
    return kinds


def main():
    parser = argparse.ArgumentParser()
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--dry-run", action="store_true")
    mode.add_argument("--apply", action="store_true")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--field-manager", default="celer-e2e")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    api = Api()
    docs = []
    for f in args.files:
        with open(f) as fh:
            docs += [d for d in yaml.safe_load_all(fh) if d]
    # CRDs first, so that the kinds they define are known to discovery afterwards.
    docs.sort(key=lambda d: d.get("kind") != "CustomResourceDefinition")
    kinds = discover(api)
    refused = warned = 0
    for doc in docs:
        key = (doc.get("apiVersion"), doc.get("kind"))
        name = doc.get("metadata", {}).get("name", "")
        label = f"{key[1]} {name}"
        if key not in kinds and key[1] != "CustomResourceDefinition":
            kinds = discover(api)
        if key not in kinds:
            print(f"REFUSED {label}: the API server serves no kind {key[0]}/{key[1]}")
            refused += 1
            continue
        prefix, plural, namespaced = kinds[key]
        path = prefix
        if namespaced:
            ns = doc["metadata"].get("namespace") or args.namespace
            path += f"/namespaces/{ns}"
        path += f"/{plural}/{name}?fieldManager={args.field_manager}&force=true"
        if args.dry_run:
            path += "&dryRun=All"
        status, body, warnings = api.call(
            "PATCH", path, json.dumps(doc).encode(), "application/apply-patch+yaml"
        )
        if status not in (200, 201):
            try:
                message = json.loads(body).get("message", "")
            except ValueError:
                message = body[:300].decode(errors="replace")
            print(f"REFUSED {label}: HTTP {status}: {message}")
            refused += 1
            continue
        for w in warnings:
            print(f"WARNING {label}: {w}")
            warned += 1
        print(f"ok {label}")
    verb = "dry-run" if args.dry_run else "applied"
    print(f"{verb}: {len(docs)} objects, {refused} refused, {warned} warnings")
    sys.exit(1 if refused or warned else 0)


if __name__ == "__main__":
    main()
