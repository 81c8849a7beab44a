#!/usr/bin/env python3
"""Packs celer's container image as an OCI image layout, and checks one.

No container engine, no base image, Python's standard library only. Used by scripts/image.sh;
docs/image.md says what the image holds and why.

    oci-image.py pack --binary PATH --out DIR --archive FILE --version V --license L
                      --description TEXT
    oci-image.py check --layout DIR_OR_ARCHIVE --rootfs DIR
    oci-image.py containerfile --path FILE --version V --license L --description TEXT
                               --rustflags FLAGS

`pack` writes DIR (oci-layout, index.json, blobs/sha256/...) and FILE, the same layout as one
tar (what `skopeo` and `podman` call an oci-archive). With the same Python (its zlib writes the
gzip stream), every byte is a function of the inputs: entries sorted, fixed mtimes
(SOURCE_DATE_EPOCH, else 0), numeric owners without names, gzip without a name or a timestamp,
JSON with sorted keys.

`check` reads a layout back, verifies every digest and size against the blobs, checks the
config (user, entrypoint, environment, labels) and the layer (exactly the expected entries:
no shell, no other program, no links or devices), unpacks the layer into DIR and checks that
/celer is a static executable. `containerfile` checks that deploy/image/Containerfile describes
the same image (user, entrypoint, environment, labels, /etc files). Checks print one line each
and exit 1 on the first failure.
"""

import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import stat
import struct
import sys
import tarfile
import tempfile

UID = GID = 65532
USER = f"{UID}:{GID}"
ENTRYPOINT = ["/celer"]
# PATH=/ lets `kubectl exec ... -- celer ...` find the binary; nothing else is set.
ENV = ["PATH=/"]

# The image size target (issue 22), in bytes.
TARGET = 30_000_000

MEDIA_INDEX = "application/vnd.oci.image.index.v1+json"
MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"

# /etc/passwd and /etc/group, shared with deploy/image/Containerfile: root for the files'
# owner, nonroot (65532) for the process. No login shell exists in the image; /sbin/nologin
# is the conventional marker, not a file.
IMAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "image")


def etc_file(name):
    with open(os.path.join(IMAGE_DIR, name), "rb") as f:
        return f.read()


# The layer: (name, type, mode, uid, gid). The binary belongs to root (mode 0755): the process
# runs as 65532 and so cannot rewrite its own program even on a writable root filesystem.
# /tmp is there for a writable run (celer serve writes its self-signed certificate there by
# default); with a read-only root filesystem, mount an emptyDir on it or give --tls-cert.
LAYER = [
    ("celer", "file", 0o755, 0, 0),
    ("etc", "dir", 0o755, 0, 0),
    ("etc/group", "file", 0o644, 0, 0),
    ("etc/passwd", "file", 0o644, 0, 0),
    ("tmp", "dir", 0o1777, 0, 0),
]


def mtime():
    return int(os.environ.get("SOURCE_DATE_EPOCH", "0"))


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tar_bytes(entries):
    """A tar of (TarInfo, bytes or None) in the order given, deterministic."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def tar_info(name, kind, mode, uid, gid, size=0):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if kind == "dir" else tarfile.REGTYPE
    info.mode = mode
    info.uid, info.gid = uid, gid
    info.uname = info.gname = ""
    info.mtime = mtime()
    info.size = size
    return info


def layer_tar(binary):
    contents = {"celer": binary, "etc/passwd": etc_file("passwd"), "etc/group": etc_file("group")}
    entries = []
    for name, kind, mode, uid, gid in sorted(LAYER):
        data = contents.get(name)
        info = tar_info(name, kind, mode, uid, gid, len(data) if data is not None else 0)
        entries.append((info, data))
    return tar_bytes(entries)


def gzip_bytes(data):
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as z:
        z.write(data)
    return out.getvalue()


def created():
    t = datetime.datetime.fromtimestamp(mtime(), tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def labels(args):
    return {
        "org.opencontainers.image.title": "celer",
        "org.opencontainers.image.description": args.description,
        "org.opencontainers.image.version": args.version,
        "org.opencontainers.image.licenses": args.license,
    }


def pack(args):
    with open(args.binary, "rb") as f:
        binary = f.read()
    layer = layer_tar(binary)
    layer_gz = gzip_bytes(layer)
    config = canonical_json(
        {
            "created": created(),
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "User": USER,
                "Entrypoint": ENTRYPOINT,
                "Env": ENV,
                "Labels": labels(args),
            },
            "rootfs": {"type": "layers", "diff_ids": [sha256(layer)]},
            "history": [{"created": created(), "created_by": "scripts/image.sh"}],
        }
    )
    manifest = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": MEDIA_MANIFEST,
            "config": {"mediaType": MEDIA_CONFIG, "digest": sha256(config), "size": len(config)},
            "layers": [
                {"mediaType": MEDIA_LAYER, "digest": sha256(layer_gz), "size": len(layer_gz)}
            ],
            "annotations": labels(args),
        }
    )
    index = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": MEDIA_INDEX,
            "manifests": [
                {
                    "mediaType": MEDIA_MANIFEST,
                    "digest": sha256(manifest),
                    "size": len(manifest),
                    "platform": {"architecture": "amd64", "os": "linux"},
                    "annotations": {"org.opencontainers.image.ref.name": args.version},
                }
            ],
        }
    )
    layout = canonical_json({"imageLayoutVersion": "1.0.0"})
    blobs = {sha256(b): b for b in (config, manifest, layer_gz)}

    # The directory, replaced whole.
    if os.path.isdir(args.out):
        for root, dirs, files in os.walk(args.out, topdown=False):
            for name in files:
                os.unlink(os.path.join(root, name))
            for name in dirs:
                os.rmdir(os.path.join(root, name))
    os.makedirs(os.path.join(args.out, "blobs", "sha256"), exist_ok=True)
    files = {"oci-layout": layout, "index.json": index}
    files.update({f"blobs/sha256/{d[len('sha256:'):]}": b for d, b in blobs.items()})
    for name, data in files.items():
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)

    # The archive: the same files, directories first, sorted.
    entries = [
        (tar_info("blobs", "dir", 0o755, 0, 0), None),
        (tar_info("blobs/sha256", "dir", 0o755, 0, 0), None),
    ]
    for name in sorted(files):
        entries.append((tar_info(name, "file", 0o644, 0, 0, len(files[name])), files[name]))
    archive = tar_bytes(entries)
    tmp = args.archive + ".tmp"
    with open(tmp, "wb") as f:
        f.write(archive)
    os.replace(tmp, args.archive)

    print(f"manifest   {sha256(manifest)}")
    print(f"binary     {len(binary):>10} bytes  {mib(len(binary))}")
    print(f"layer      {len(layer):>10} bytes  {mib(len(layer))} (uncompressed, the image's size on disk)")
    print(f"layer.gz   {len(layer_gz):>10} bytes  {mib(len(layer_gz))} (compressed, what a registry stores and a node pulls)")
    print(f"archive    {len(archive):>10} bytes  {mib(len(archive))} ({args.archive})")


def mib(n):
    return f"{n / 1048576:6.2f} MiB / {n / 1e6:6.2f} MB"


# ---- check ------------------------------------------------------------------------------


class CheckFailed(Exception):
    pass


def ok(what):
    print(f"ok    {what}")


def require(condition, what):
    if not condition:
        raise CheckFailed(what)
    ok(what)


def read_layout(path, tmpdir):
    """The layout's directory: `path` itself, or where the archive `path` was unpacked."""
    if os.path.isdir(path):
        return path
    out = os.path.join(tmpdir, "layout")
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name.split("/"):
                raise CheckFailed(f"archive entry {m.name!r} is not a plain file or directory")
        tar.extractall(out, filter="data")
    return out


def blob(layout, descriptor, media_type):
    require(descriptor.get("mediaType") == media_type, f"descriptor media type {media_type}")
    algo, _, hexdigest = descriptor["digest"].partition(":")
    if algo != "sha256" or len(hexdigest) != 64:
        raise CheckFailed(f"digest {descriptor['digest']!r} is not sha256")
    with open(os.path.join(layout, "blobs", "sha256", hexdigest), "rb") as f:
        data = f.read()
    require(sha256(data) == descriptor["digest"], f"blob {descriptor['digest'][:19]}... digest")
    require(len(data) == descriptor["size"], f"blob {descriptor['digest'][:19]}... size {len(data)}")
    return data


def is_static_elf(path):
    """True when the ELF file has no PT_INTERP program header (no dynamic loader)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return False
        phoff = struct.unpack_from("<Q", head, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        if struct.unpack_from("<I", table, i * phentsize)[0] == 3:  # PT_INTERP
            return False
    return True


def check(args):
    with tempfile.TemporaryDirectory() as tmpdir:
        layout = read_layout(args.layout, tmpdir)
        with open(os.path.join(layout, "oci-layout"), "rb") as f:
            require(json.load(f) == {"imageLayoutVersion": "1.0.0"}, "oci-layout 1.0.0")
        with open(os.path.join(layout, "index.json"), "rb") as f:
            index = json.load(f)
        require(len(index.get("manifests", [])) == 1, "index.json names one manifest")
        manifest = json.loads(blob(layout, index["manifests"][0], MEDIA_MANIFEST))
        config = json.loads(blob(layout, manifest["config"], MEDIA_CONFIG))
        require(len(manifest["layers"]) == 1, "one layer")
        layer_gz = blob(layout, manifest["layers"][0], MEDIA_LAYER)
        layer = gzip.decompress(layer_gz)
        require(config["rootfs"]["diff_ids"] == [sha256(layer)], "config diff_id is the layer's")
        check_config(config)
        check_layer(layer, args.rootfs)
        # The target: an image under 30 MB. Enforced on the compressed layer (what a
        # registry stores and a node pulls); the uncompressed size is reported against it.
        require(len(layer_gz) < TARGET, f"compressed layer {len(layer_gz)} bytes, under {TARGET}")
        if len(layer) < TARGET:
            ok(f"uncompressed layer {len(layer)} bytes, under {TARGET}")
        else:
            print(f"note  uncompressed layer {len(layer)} bytes, over {TARGET} (not a failure)")


def check_config(config):
    c = config["config"]
    require(config.get("os") == "linux" and config.get("architecture") == "amd64", "linux/amd64")
    require(c.get("User") == USER, f"User {USER}")
    require(c.get("Entrypoint") == ENTRYPOINT, f"Entrypoint {ENTRYPOINT}")
    require(not c.get("Cmd"), "no Cmd")
    require(c.get("Env") == ENV, f"Env {ENV} and nothing else")
    names = ("title", "description", "version", "licenses")
    got = c.get("Labels") or {}
    require(
        all(got.get(f"org.opencontainers.image.{n}") for n in names),
        "labels org.opencontainers.image.{" + ",".join(names) + "}",
    )


def check_layer(layer, rootfs):
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        members = tar.getmembers()
        got = [
            (m.name, "dir" if m.isdir() else "file" if m.isfile() else "other", m.mode, m.uid, m.gid)
            for m in members
        ]
        require(got == sorted(LAYER), f"layer is exactly {[e[0] for e in sorted(LAYER)]}, sorted")
        require(len({m.mtime for m in members}) == 1, "one fixed mtime for every entry")
        # Redundant with the exact listing, said for the reader: nothing to run but celer.
        executables = [m.name for m in members if m.isfile() and m.mode & 0o111]
        require(executables == ["celer"], "no shell or other program: the only executable is /celer")
        passwd = tar.extractfile("etc/passwd").read()
        require(passwd == etc_file("passwd"), "/etc/passwd is deploy/image/passwd")
        require(f"\nnonroot:x:{UID}:{GID}:".encode() in passwd, f"/etc/passwd has nonroot {UID}")
        require(tar.extractfile("etc/group").read() == etc_file("group"), "/etc/group is deploy/image/group")
        if os.path.isdir(rootfs):
            raise CheckFailed(f"{rootfs} exists; give a new directory")
        tar.extractall(rootfs, filter="fully_trusted", numeric_owner=True)
    binary = os.path.join(rootfs, "celer")
    require(is_static_elf(binary), "/celer is an ELF executable without a dynamic loader (static)")
    mode = stat.S_IMODE(os.stat(binary).st_mode)
    require(mode == 0o755, f"/celer unpacked with mode {mode:o}")
    ok(f"unpacked into {rootfs}")


def check_containerfile(args):
    """The Containerfile's image says what the packed one says (it is not built here)."""
    with open(args.path) as f:
        text = f.read()
    lines = [line.strip() for line in text.splitlines()]
    require(f"ARG VERSION={args.version}" in lines, f"Containerfile: VERSION {args.version}")
    require(f"ARG LICENSE={args.license}" in lines, f"Containerfile: LICENSE {args.license}")
    require(
        f"ARG DESCRIPTION={json.dumps(args.description)}" in lines,
        "Containerfile: DESCRIPTION is crates/cli's",
    )
    require(f"USER {USER}" in lines, f"Containerfile: USER {USER}")
    require(f"ENTRYPOINT {json.dumps(ENTRYPOINT)}" in lines, f"Containerfile: ENTRYPOINT {ENTRYPOINT}")
    require([line for line in lines if line.startswith("ENV ")] == [f"ENV {e}" for e in ENV], f"Containerfile: ENV {ENV}")
    require("FROM scratch" in lines, "Containerfile: the image is FROM scratch")
    require(f"RUSTFLAGS='{args.rustflags}'" in text, f"Containerfile: RUSTFLAGS {args.rustflags}")
    for name in ("passwd", "group"):
        require(f"deploy/image/{name} /rootfs/etc/{name}" in text, f"Containerfile: /etc/{name} from deploy/image")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    pk = sub.add_parser("pack")
    pk.add_argument("--binary", required=True)
    pk.add_argument("--out", required=True)
    pk.add_argument("--archive", required=True)
    pk.add_argument("--version", required=True)
    pk.add_argument("--license", required=True)
    pk.add_argument("--description", required=True)
    ck = sub.add_parser("check")
    ck.add_argument("--layout", required=True)
    ck.add_argument("--rootfs", required=True)
    cf = sub.add_parser("containerfile")
    cf.add_argument("--path", required=True)
    cf.add_argument("--version", required=True)
    cf.add_argument("--license", required=True)
    cf.add_argument("--description", required=True)
    cf.add_argument("--rustflags", required=True)
    args = p.parse_args()
    if args.command == "pack":
        pack(args)
    else:
        try:
            check(args) if args.command == "check" else check_containerfile(args)
        except (CheckFailed, OSError, KeyError, ValueError, tarfile.TarError) as e:
            print(f"FAIL  {e}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
