#!/usr/bin/env python3
"""Writes the Pod Security sets of the peers for e2e/peers/compare.sh, from the corpus beside
the project (read at run time; nothing of it is committed):

  OUT/kyverno/     Kyverno's pod-security ValidatingPolicy set (kyverno-policies
                   pod-security-vpol: 10 baseline, 6 restricted), each made to deny
                   (validationActions [Deny]; the corpus has Audit) with background off
  OUT/gatekeeper/  gatekeeper-library's pod-security-policy templates for the Pod Security
                   Standards' checks, each with the sample Constraint named below
                   (enforcementAction deny); Gatekeeper runs each as it picks (CEL where a
                   template carries K8sNativeValidation, else Rego)

    e2e/peers/pod-security.py CORPUS OUT
"""
import pathlib
import sys

import yaml

corpus, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])

# Templates of the standards' checks and the sample Constraint of each that says what the
# standard says. Left out: flexvolume-drivers, fsgroup and read-only-root-filesystem (not
# checks of the standards) and seccomp (the annotation form seccompv2 replaces).
GATEKEEPER = {
    "allow-privilege-escalation": "psp-allow-privilege-escalation-container",
    "apparmor": "psp-apparmor",
    "capabilities": "psp-capabilities-restricted",
    "forbidden-sysctls": "psp-forbidden-sysctls",
    "host-filesystem": "psp-host-filesystem",
    "host-namespaces": "psp-host-namespace",
    "host-network-ports": "psp-host-network-ports",
    "host-probes-lifecycle": "psp-host-probes-lifecycle",
    "host-process": "psp-host-process",
    "privileged-containers": "psp-privileged-container",
    "proc-mount": "psp-proc-mount",
    "seccompv2": "psp-seccomp-restricted",
    "selinux": "psp-selinux-v2",
    "users": "psp-pods-allowed-user-ranges",
    "volumes": "psp-volume-types",
}


def docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def write(path, documents):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


count = 0
root = corpus / "kyverno-policies/pod-security-vpol"
for f in sorted(root.rglob("*.yaml")):
    # The policy is DIR/NAME/NAME.yaml; its tests sit in hidden folders beside it.
    if any(part.startswith(".") for part in f.relative_to(root).parts) or f.stem != f.parent.name:
        continue
    for d in docs(f):
        if d.get("kind") != "ValidatingPolicy":
            continue
        spec = d["spec"]
        spec["validationActions"] = ["Deny"]
        spec.setdefault("evaluation", {})["background"] = {"enabled": False}
        write(out / "kyverno" / f"{d['metadata']['name']}.yaml", [d])
        count += 1
print(f"kyverno: {count} ValidatingPolicies", file=sys.stderr)

library = corpus / "gatekeeper-library/library/pod-security-policy"
for template, sample in GATEKEEPER.items():
    t = docs(library / template / "template.yaml")
    c = docs(library / template / "samples" / sample / "constraint.yaml")
    for constraint in c:
        constraint["spec"]["enforcementAction"] = "deny"
    write(out / "gatekeeper" / f"{template}.yaml", t + c)
print(f"gatekeeper: {len(GATEKEEPER)} templates with a Constraint each", file=sys.stderr)
