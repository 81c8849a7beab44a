#!/usr/bin/env python3
"""Pushes a made-up image to a registry over plain HTTP (the e2e registry,
go-containerregistry's cmd/registry): a config blob with the given `config` (the image's
runtime config, such as {"User": "0"}), a manifest naming it, and with --index an image index
whose linux/amd64 entry is that manifest (beside a linux/arm64 one). Prints the digest the
reference resolves to.

    e2e/registry-push.py 127.0.0.1:5000 team/app:v1 '{"User": "0"}' [--index]
"""
import hashlib
import json
import sys
import urllib.request


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def request(method, url, data=None, content_type=None):
    req = urllib.request.Request(url, data=data, method=method)
    if content_type:
        req.add_header("Content-Type", content_type)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status, resp.headers


def push_blob(registry, repo, data):
    d = digest(data)
    _, headers = request("POST", f"http://{registry}/v2/{repo}/blobs/uploads/")
    location = headers["Location"]
    if location.startswith("/"):
        location = f"http://{registry}{location}"
    sep = "&" if "?" in location else "?"
    request("PUT", f"{location}{sep}digest={d}", data, "application/octet-stream")
    return d


def push_manifest(registry, repo, reference, body, media_type):
    data = json.dumps(body).encode()
    request("PUT", f"http://{registry}/v2/{repo}/manifests/{reference}", data, media_type)
    return digest(data), len(data)


def main(registry, ref, config, index):
    repo, tag = ref.rsplit(":", 1)
    config_doc = {"architecture": "amd64", "os": "linux", "config": json.loads(config),
                  "rootfs": {"type": "layers", "diff_ids": []}}
    config_bytes = json.dumps(config_doc).encode()
    config_digest = push_blob(registry, repo, config_bytes)
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": config_digest, "size": len(config_bytes)},
                "layers": []}
    if not index:
        d, _ = push_manifest(registry, repo, tag, manifest, manifest["mediaType"])
        print(d)
        return
    arm = dict(config_doc, architecture="arm64")
    arm_bytes = json.dumps(arm).encode()
    arm_manifest = dict(manifest, config=dict(manifest["config"], digest=push_blob(registry, repo, arm_bytes),
                                              size=len(arm_bytes)))
    amd_digest, amd_size = push_manifest(registry, repo, digest(json.dumps(manifest).encode()), manifest,
                                         manifest["mediaType"])
    arm_digest, arm_size = push_manifest(registry, repo, digest(json.dumps(arm_manifest).encode()), arm_manifest,
                                         manifest["mediaType"])
    entry = lambda d, size, arch: {"mediaType": manifest["mediaType"], "digest": d, "size": size,
                                   "platform": {"os": "linux", "architecture": arch}}
    index_doc = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                 "manifests": [entry(arm_digest, arm_size, "arm64"), entry(amd_digest, amd_size, "amd64")]}
    d, _ = push_manifest(registry, repo, tag, index_doc, index_doc["mediaType"])
    print(d)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--index"]
    if len(args) != 3:
        sys.exit(__doc__)
    main(args[0], args[1], args[2], "--index" in sys.argv[1:])
