#!/usr/bin/env bash
# Builds celer's container image on a machine without a container engine and without a base
# image: a static celer binary (glibc, +crt-static, the `image` profile) packed by
# scripts/oci-image.py into an OCI image layout, as a directory and as an oci-archive tar.
# docs/image.md explains the choices; deploy/image/Containerfile is the same image for those
# who have a container engine.
#
#   scripts/image.sh            build the binary, pack the image, print the sizes
#   scripts/image.sh --check    the same, then test the image (below)
#   --no-build                  pack (and check) the binary already built
#   (--as-container is internal: --check runs the script again with it, in a mount namespace)
#
# Outputs (under target/, which git ignores):
#   target/static/x86_64-unknown-linux-gnu/image/celer   the binary (its own target dir, so the
#                                                        normal release build is left alone)
#   target/image/oci/                                    the OCI image layout
#   target/image/celer-<version>-oci.tar                 the same as one oci-archive
#
# --check unpacks the archive into a temporary directory and checks its manifest, config and
# layer (scripts/oci-image.py check) and that deploy/image/Containerfile describes the same
# image; runs the unpacked /celer with an empty environment (--version, `celer apply` and
# `celer test` on examples/); and, when run as root with unshare(1) and chroot(1), runs it as
# a container would: the unpacked root filesystem alone (no /dev, no /proc), mounted read-only,
# a tmpfs on /tmp, /etc/hosts and /etc/resolv.conf bind-mounted as a kubelet does, user 65532,
# no environment: `celer apply`, `celer serve` with its self-signed certificate, and
# `celer bench` against it through `localhost` (/etc/hosts) and through a name only a DNS
# server knows (scripts/image-dns.py on 127.53.0.1:53). Exit status 1 on any failure.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
self=$repo/scripts/image.sh
cd "$repo"

# The run as a container, in a mount namespace of its own (unshare -m runs this script again
# with --as-container); rootfs, tmp, port, version, chroot and name come from the environment.
as_container() {
    say() { echo "ok    as a container: $*"; }
    die() { echo "FAIL  as a container: $*" >&2; exit 1; }
    mount --make-rprivate /
    mount --bind "$rootfs" "$rootfs"
    mount --bind "$tmp/hosts" "$rootfs/etc/hosts"
    mount --bind "$tmp/resolv.conf" "$rootfs/etc/resolv.conf"
    mount -o remount,bind,ro "$rootfs"
    mount -t tmpfs -o mode=1777,size=64m tmpfs "$rootfs/tmp"
    cp -r "$tmp/in" "$rootfs/tmp/in"
    if touch "$rootfs/x" 2>/dev/null; then die "the root filesystem is writable"; fi
    [ ! -e "$rootfs/dev" ] || die "the root filesystem has /dev"
    run() { env -i "$chroot" --userspec=65532:65532 --groups=65532 "$rootfs" "$@"; }
    run /celer --version | grep -qF "celer $version" || die "/celer --version"
    say "/celer --version as 65532:65532, read-only root, no /dev"
    run /celer apply --policy /tmp/in/policy.yaml --resource /tmp/in/pod.yaml 2>/dev/null |
        grep -qF "ALLOWED, mutated" || die "celer apply"
    say "celer apply"
    # exec: $serve is celer itself (env and chroot exec too), so SIGTERM reaches it.
    (exec env -i "$chroot" --userspec=65532:65532 --groups=65532 "$rootfs" \
        /celer serve --listen "127.0.0.1:$port" --tls-san "$name" >"$tmp/serve.log" 2>&1) &
    serve=$!
    trap 'kill "$serve" 2>/dev/null || true' EXIT
    for _ in $(seq 100); do [ -s "$rootfs/tmp/celer-tls/ca.crt" ] && break; sleep 0.1; done
    [ -s "$rootfs/tmp/celer-tls/ca.crt" ] || { cat "$tmp/serve.log" >&2; die "celer serve wrote no CA"; }
    say "celer serve started, its self-signed certificate written in /tmp"
    bench() { # bench HOST: 20 requests through HOST, all answered, allowed
        run /celer bench --target "https://$1:$port/validate" --ca /tmp/celer-tls/ca.crt \
            --count 20 --rate 50 --expect allowed --output json >"$tmp/bench.json" 2>"$tmp/bench.err" ||
            { cat "$tmp/bench.err" >&2; die "celer bench through $1"; }
        python3 - "$tmp/bench.json" <<'EOF' || die "celer bench through $1"
import json, sys
r = json.load(open(sys.argv[1]))["run"]
ok = r["requests"] == r["successful"] == 20 and not any(r["errors"].values())
sys.exit(0 if ok else json.dumps(r["errors"]) + " " + json.dumps(r["failure_samples"])[:500])
EOF
    }
    bench localhost
    say "celer bench to https://localhost:$port: 20 of 20 answered (the name from /etc/hosts)"
    bench "$name"
    say "celer bench to https://$name:$port: 20 of 20 answered (the name from DNS)"
    kill -TERM "$serve"
    status=0
    wait "$serve" || status=$?
    trap - EXIT
    [ "$status" = 0 ] || { cat "$tmp/serve.log" >&2; die "celer serve exited with status $status"; }
    say "celer serve stopped cleanly on SIGTERM"
}

check=0
build=1
for arg in "$@"; do
    case $arg in
    --check) check=1 ;;
    --no-build) build=0 ;;
    --as-container)
        as_container
        exit 0
        ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "image.sh: unknown argument $arg (--check, --no-build, --help)" >&2
        exit 2
        ;;
    esac
done

triple=x86_64-unknown-linux-gnu
target_dir=$repo/target/static
binary=$target_dir/$triple/image/celer
out=$repo/target/image
layout=$out/oci
# Static glibc. getrandom 0.3 and 0.4 (ahash, rand, tempfile) look glibc's getrandom() up with
# dlsym, which finds nothing in a static binary, and then read /dev/urandom instead (a panic
# in a root filesystem without /dev); the cfg has them call getrandom() directly, as they do
# in the dynamic build. deploy/image/Containerfile uses the same flags (--check compares).
rustflags='-C target-feature=+crt-static --cfg getrandom_backend="linux_getrandom"'

fail() {
    echo "FAIL  $*" >&2
    exit 1
}

# Version, license and description from the manifests (Cargo.toml is the one source).
read -r version license description < <(python3 - <<'EOF'
import tomllib
with open("Cargo.toml", "rb") as f:
    ws = tomllib.load(f)["workspace"]["package"]
with open("crates/cli/Cargo.toml", "rb") as f:
    desc = tomllib.load(f)["package"]["description"]
print(ws["version"], ws["license"], desc)
EOF
)
archive=$out/celer-$version-oci.tar

if [ "$build" = 1 ]; then
    # RUSTFLAGS with an explicit --target applies to the target only: build scripts and proc
    # macros stay dynamic, as they run here. CARGO_ENCODED_RUSTFLAGS would override it.
    start=$(date +%s)
    env -u CARGO_ENCODED_RUSTFLAGS RUSTFLAGS="$rustflags" \
        nice -n 10 cargo build --locked --profile image --target "$triple" -p celer \
        --target-dir "$target_dir"
    echo "build: $(($(date +%s) - start)) s"
fi
[ -x "$binary" ] || fail "$binary is not built (run without --no-build)"

# Static: no program interpreter, no shared libraries needed.
if readelf -l "$binary" | grep -q 'INTERP'; then fail "$binary asks for a dynamic loader"; fi
if readelf -d "$binary" | grep -q '(NEEDED)'; then fail "$binary needs shared libraries"; fi
if command -v file >/dev/null; then
    echo "file: $(file -b "$binary" | grep -oE 'static(-pie)? linked|statically linked')"
fi
env -i "$binary" --version >/dev/null || fail "$binary --version"

mkdir -p "$out"
python3 scripts/oci-image.py pack --binary "$binary" --out "$layout" --archive "$archive" \
    --version "$version" --license "$license" --description "$description"

# Other tools' reading of the layout, when they are installed (optional; the checks below do
# not need them).
if command -v skopeo >/dev/null; then
    skopeo inspect --config "oci-archive:$archive" >/dev/null &&
        skopeo inspect "oci:$layout:$version" >/dev/null &&
        echo "skopeo: reads the archive and the layout" || fail "skopeo cannot read the image"
else
    echo "skopeo: not installed, not verified with it"
fi
if command -v umoci >/dev/null; then
    umoci stat --image "$layout:$version" >/dev/null &&
        echo "umoci: stat reads the layout" || fail "umoci cannot read the layout"
else
    echo "umoci: not installed, not verified with it"
fi

[ "$check" = 1 ] || exit 0

# ---- --check ----------------------------------------------------------------------------

tmp=$(mktemp -d)
dns_pid=
cleanup() {
    [ -z "$dns_pid" ] || kill "$dns_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
rootfs=$tmp/rootfs
python3 scripts/oci-image.py check --layout "$archive" --rootfs "$rootfs"
python3 scripts/oci-image.py containerfile --path deploy/image/Containerfile \
    --version "$version" --license "$license" --description "$description" \
    --rustflags "$rustflags"
celer=$rootfs/celer

expect() { # expect STATUS TEXT COMMAND...: runs COMMAND, wants STATUS and TEXT in its output
    local want=$1 text=$2 status=0 output shown
    shift 2
    shown="$*"
    shown=${shown//"$tmp"\//}
    output=$("$@" 2>&1) || status=$?
    if [ "$status" != "$want" ] || ! grep -qF -- "$text" <<<"$output"; then
        printf '%s\n' "$output" >&2
        fail "$shown: status $status (want $want), output without '$text'"
    fi
    echo "ok    $shown (status $status, says '$text')"
}

expect 0 "celer $version" env -i "$celer" --version
expect 0 "ALLOWED, mutated" env -i "$celer" apply \
    --policy examples/admission/policy.yaml --resource examples/pod.yaml
expect 1 "DENIED" env -i "$celer" apply \
    --policy examples/admission/policy.yaml --resource examples/admission/pods.yaml
expect 0 "passed" env -i "$celer" test examples/admission

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v chroot >/dev/null ||
    ! unshare -m true 2>/dev/null; then
    echo "skip  the run as a container (needs root, unshare -m and chroot)"
    echo "ok    image checked (without the run as a container)"
    exit 0
fi

# As a container runtime would run it. Mount points for what the runtime mounts are made
# before the root filesystem turns read-only (runc does the same).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dns=127.53.0.1
name=celer.test
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n' >"$tmp/hosts"
printf 'search default.svc.cluster.local svc.cluster.local\nnameserver %s\noptions ndots:5\n' \
    "$dns" >"$tmp/resolv.conf"
python3 scripts/image-dns.py "$dns" "$name" 127.0.0.1 >"$tmp/dns.log" 2>&1 &
dns_pid=$!
for _ in $(seq 50); do grep -q ready "$tmp/dns.log" && break; sleep 0.1; done
grep -q ready "$tmp/dns.log" || { cat "$tmp/dns.log" >&2; fail "the test's DNS server on $dns:53"; }
touch "$rootfs/etc/hosts" "$rootfs/etc/resolv.conf"
mkdir -p "$tmp/in"
cp examples/admission/policy.yaml examples/pod.yaml "$tmp/in/"
chroot=$(command -v chroot)
export rootfs tmp port version chroot name
unshare -m "$BASH" "$self" --as-container || fail "the run as a container"
echo "ok    image checked"
