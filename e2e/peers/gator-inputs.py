#!/usr/bin/env python3
"""Inputs for `gator bench` and celer's gator_inputs bench (issue 15 item 3, issue 18): every
gatekeeper-library template with CEL code (a `K8sNativeValidation` entry in `spec.targets[].code`),
or with `--engine rego` every template with Rego, its CEL entries removed so that both engines
run the Rego; the sample Constraints its suite.yaml names, and the objects of its cases,
written as three files gator reads with `-f DIR`:

    e2e/peers/gator-inputs.py CORPUS OUT                 # CORPUS: ../shared/corpus; OUT: a directory
    e2e/peers/gator-inputs.py --engine rego CORPUS OUT

Left out, as gator bench cannot review them the way its suite does: cases whose object is an
AdmissionReview (gator bench would review the review object itself) or that need inventory
(referential data, which gator bench does not sync); templates without code for the engine
(and, for Rego, expansion and `external_data`, which gator bench does not run).
Constraints are renamed `<kind>-<n>` only when two of a kind share a name. Prints a summary.
"""
import os
import sys

import yaml


def docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def has_cel(template):
    for target in template.get("spec", {}).get("targets", []) or []:
        for code in target.get("code", []) or []:
            if code.get("engine") == "K8sNativeValidation":
                return True
    return False


def rego_only(template):
    """The template with Rego and no CEL entries, or None when it has no Rego."""
    rego = False
    for target in template.get("spec", {}).get("targets", []) or []:
        if target.get("rego"):
            rego = "external_data" not in target["rego"]
        code = [c for c in target.get("code", []) or [] if c.get("engine") != "K8sNativeValidation"]
        if any(c.get("engine") == "Rego" for c in code):
            rego = True
        if "code" in target:
            target["code"] = code
            if not code:
                del target["code"]
    return template if rego else None


def main(corpus, out, engine):
    library = os.path.join(corpus, "gatekeeper-library", "library")
    templates, constraints, objects = [], [], []
    names = set()
    skipped = 0
    for root, _, files in sorted(os.walk(library)):
        if "suite.yaml" not in files:
            continue
        for suite in docs(os.path.join(root, "suite.yaml")):
            for test in suite.get("tests", []) or []:
                template_path = os.path.join(root, test["template"])
                template = docs(template_path)[0]
                if engine == "rego":
                    template = rego_only(template)
                    if template is None:
                        continue
                elif not has_cel(template):
                    continue
                if template not in templates:
                    templates.append(template)
                for constraint in docs(os.path.join(root, test["constraint"])):
                    key = (constraint["kind"], constraint["metadata"]["name"])
                    if key in names:
                        constraint["metadata"]["name"] += f"-{len(names)}"
                        key = (constraint["kind"], constraint["metadata"]["name"])
                    names.add(key)
                    constraints.append(constraint)
                for case in test.get("cases", []) or []:
                    if case.get("inventory") or case.get("skip"):
                        skipped += 1
                        continue
                    for obj in docs(os.path.join(root, case["object"])):
                        if obj.get("kind") == "AdmissionReview":
                            skipped += 1
                            continue
                        objects.append(obj)
    os.makedirs(out, exist_ok=True)
    for name, items in (("templates", templates), ("constraints", constraints),
                        ("objects", objects)):
        with open(os.path.join(out, f"{name}.yaml"), "w") as f:
            yaml.safe_dump_all(items, f, sort_keys=False)
    print(f"gator-inputs ({engine}): {len(templates)} templates, {len(constraints)} constraints, "
          f"{len(objects)} objects ({skipped} cases left out) in {out}")


if __name__ == "__main__":
    args = sys.argv[1:]
    engine = "cel"
    if args[:1] == ["--engine"] and len(args) >= 2:
        engine, args = args[1], args[2:]
    if len(args) != 2 or engine not in ("cel", "rego"):
        sys.exit(__doc__)
    main(args[0], args[1], engine)
