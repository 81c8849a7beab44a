#!/usr/bin/env python3
"""Kyverno's chainsaw conformance tests for e2e/chainsaw.sh: which to run, and what they gave.

    e2e/chainsaw-tests.py plan CHAINSAW_DIR SCRATCH FOLDER...
        copies _step-templates and each FOLDER's test directories (those holding a
        chainsaw-test.yaml) from CHAINSAW_DIR (the corpus, read only) to SCRATCH, where
        chainsaw may write; a test the skip rule names is not copied. Writes SCRATCH/plan.json.
        FOLDER `cel` stands for the ClusterPolicy validate.cel tests (see cel_tests).
    e2e/chainsaw-tests.py report SCRATCH/plan.json REPORT.json
        prints, per folder, `passed/failed/skipped`, each failure with the first lines of its
        reason, each skip with its reason; the last line is `chainsaw: N passed, M failed,
        K skipped`.

The skip rule (decided from the test's own files, before it runs, never from its outcome): a
test is skipped when it needs what the e2e environment (kube-apiserver, etcd and
kube-controller-manager, celer in Kyverno's place, no kubelet or scheduler) cannot have:
  reports   it names Kyverno's intermediate reports (reports.kyverno.io EphemeralReport,
            ClusterEphemeralReport): celer never writes them, by design (its controller
            writes the PolicyReports and OpenReports directly), and their CRDs are not
            installed;
  events    it asserts an Event: Kyverno's event generator;
  kubelet   it asserts a Pod's status (Pods are never scheduled: no kubelet, no scheduler);
  controllers  it asserts the status of a Deployment, ReplicaSet, StatefulSet, DaemonSet or Job
            (their Pods never run: no kubelet or scheduler, so no status settles);
  kyverno   it reads or changes Kyverno's own installation (its ConfigMaps, Deployments,
            Services, Secrets, ServiceAccounts or RBAC in the `kyverno` namespace);
  corpus    it names a step template that is not where it says (a broken path in the
            corpus: chainsaw refuses to load any test then), or a script step runs a shell
            script (`./x.sh`) the corpus does not carry (it was extracted without shell code);
  command   a script step runs a command that is not on PATH here (checked with `command -v`).
Everything else runs, and fails honestly when celer does not do what Kyverno does.
"""
import json
import os
import re
import shutil
import sys

import yaml

EPHEMERAL_REPORT_KINDS = {"EphemeralReport", "ClusterEphemeralReport"}
CONTROLLED = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"}
INSTALLATION = {"ConfigMap", "Deployment", "Service", "Secret", "ServiceAccount", "Role", "RoleBinding"}
SHELL_WORDS = {
    "if", "then", "else", "elif", "fi", "for", "do", "done", "while", "case", "esac", "set",
    "export", "echo", "exit", "return", "local", "true", "false", "test", "[", "[[", "cd",
    "sleep", "read", "printf", "unset", "shift", "{", "}", "(", ")", "!", "function", "in",
    "break", "continue", "until", "eval", "wait", "trap", "source", ".", "declare", "let",
}


def docs(path):
    try:
        with open(path) as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError):
        return []


def objects(node):
    """Every mapping with a kind and an apiVersion, anywhere in node."""
    if isinstance(node, dict):
        if isinstance(node.get("kind"), str) and "apiVersion" in node:
            yield node
        for v in node.values():
            yield from objects(v)
    elif isinstance(node, list):
        for v in node:
            yield from objects(v)


def operations(node, name):
    """Every value of key `name` (assert, error, script, ...) anywhere in node."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == name:
                yield v
            yield from operations(v, name)
    elif isinstance(node, list):
        for v in node:
            yield from operations(v, name)


def commands(script):
    """The commands a shell script calls, roughly: the first word of each simple command."""
    out = set()
    heredoc = None
    for line in script.splitlines():
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)", line)
        if m:
            heredoc = m.group(1)
        for part in re.split(r"\|\||&&|[|;]|\$\(", line):
            words = part.strip().split()
            # `for NAME in ...`, `case WORD in`: the next word is no command.
            if words and words[0] in ("for", "case", "select"):
                continue
            while words and ("=" in words[0] or words[0] in SHELL_WORDS):
                words = words[1:]
            if words and re.match(r"^[A-Za-z][\w.-]*$", words[0]):
                out.add(words[0])
    return out


def skip_reason(test_dir):
    files = []
    for root, _, names in os.walk(test_dir):
        files += [os.path.join(root, n) for n in names if n.endswith((".yaml", ".yml"))]
    test = docs(os.path.join(test_dir, "chainsaw-test.yaml"))
    for d in test:
        if isinstance(d, dict) and isinstance(d.get("spec"), dict) and d["spec"].get("skip") is True:
            return "corpus: the test says `skip: true` (chainsaw skips it for Kyverno too)"
    for t in operations(test, "template"):
        if isinstance(t, str) and t.endswith((".yaml", ".yml")) and not os.path.isfile(os.path.join(test_dir, t)):
            return f"corpus: its step template {t} does not exist (chainsaw cannot load it)"
    every = [o for f in files for d in docs(f) for o in objects(d)]
    for o in every:
        if o["kind"] in EPHEMERAL_REPORT_KINDS and str(o["apiVersion"]).startswith("reports.kyverno.io"):
            return f"reports: names a {o['kind']} (Kyverno's intermediate reports, which celer never writes)"
    # Asserted objects: in the test file's assert/error operations, and the files they name.
    asserted = []
    for op in list(operations(test, "assert")) + list(operations(test, "error")):
        if isinstance(op, dict):
            if isinstance(op.get("resource"), dict):
                asserted.append(op["resource"])
            if isinstance(op.get("file"), str):
                path = os.path.join(test_dir, op["file"])
                if os.path.isfile(path):
                    asserted += [o for d in docs(path) for o in objects(d)]
    for o in asserted:
        if o["kind"] == "Event":
            return "events: asserts an Event (Kyverno's event generator)"
        if o["kind"] == "Pod" and "status" in o:
            return "kubelet: asserts a Pod's status (Pods are never scheduled here)"
        if o["kind"] in CONTROLLED and "status" in o:
            return f"controllers: asserts a {o['kind']}'s status (its Pods never run: no kubelet or scheduler)"
    for o in every:
        meta = o.get("metadata") if isinstance(o.get("metadata"), dict) else {}
        if meta.get("namespace") == "kyverno" and o["kind"] in INSTALLATION:
            return f"kyverno: touches {o['kind']} {meta.get('name')} in Kyverno's namespace"
    for op in operations(test, "script"):
        content = op.get("content", "") if isinstance(op, dict) else ""
        for script in sorted(set(re.findall(r"(?:^|[\s;&|(])\./([\w.-]+\.sh)\b", content))):
            if not os.path.isfile(os.path.join(test_dir, script)):
                return f"corpus: a script runs ./{script}, which the corpus does not carry (it has no shell code)"
        for cmd in sorted(commands(content)):
            if shutil.which(cmd) is None:
                return f"command: a script runs `{cmd}`, not on PATH here"
    return None


def test_dirs(root):
    for d, _, names in sorted(os.walk(root)):
        if "chainsaw-test.yaml" in names:
            yield d


def cel_tests(chainsaw):
    """The `cel` folder, and every other test whose ClusterPolicy or Policy has a validate.cel
    rule, outside the folders run on their own and generate-validating-admission-policy
    (Kyverno's ValidatingAdmissionPolicy generation, a controller celer does not have)."""
    out = list(test_dirs(os.path.join(chainsaw, "cel")))
    own = ("validating-policies", "mutating-policies", "namespaced-", "exceptions", "cel",
           "generate-validating-admission-policy", "_step-templates")
    for top in sorted(os.listdir(chainsaw)):
        if top.startswith(own):
            continue
        for d in test_dirs(os.path.join(chainsaw, top)):
            for name in os.listdir(d):
                if not name.endswith((".yaml", ".yml")):
                    continue
                for doc in docs(os.path.join(d, name)):
                    if (isinstance(doc, dict) and doc.get("kind") in ("ClusterPolicy", "Policy")
                            and str(doc.get("apiVersion", "")).startswith("kyverno.io/")
                            and any(isinstance(r, dict) and isinstance(r.get("validate"), dict)
                                    and "cel" in r["validate"]
                                    for r in (doc.get("spec") or {}).get("rules") or [])):
                        if d not in out:
                            out.append(d)
    return out


def plan(chainsaw, scratch, folders):
    if os.path.exists(scratch):
        shutil.rmtree(scratch)
    os.makedirs(scratch)
    shutil.copytree(os.path.join(chainsaw, "_step-templates"), os.path.join(scratch, "_step-templates"))
    tests = {}
    for folder in folders:
        dirs = cel_tests(chainsaw) if folder == "cel" else list(test_dirs(os.path.join(chainsaw, folder)))
        for d in dirs:
            rel = os.path.relpath(d, chainsaw)
            reason = skip_reason(d)
            tests[rel] = {"folder": folder, "skip": reason}
            if reason is None:
                # Same depth as in the corpus: tests name ../../_step-templates.
                shutil.copytree(d, os.path.join(scratch, rel))
    with open(os.path.join(scratch, "plan.json"), "w") as f:
        json.dump({"folders": folders, "tests": tests}, f, indent=1)
    run = sum(1 for t in tests.values() if t["skip"] is None)
    print(f"plan: {len(tests)} tests, {run} to run, {len(tests) - run} skipped by the rule")


def report(plan_file, report_file):
    with open(plan_file) as f:
        p = json.load(f)
    scratch = os.path.dirname(os.path.abspath(plan_file))
    results = {}
    try:
        with open(report_file) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        rep = {"tests": []}
        print(f"note: no chainsaw report ({e})")
    for t in rep.get("tests") or []:
        # basePath is relative to where chainsaw ran (the scratch directory) unless absolute.
        base = os.path.join(scratch, t.get("basePath", ""))
        rel = os.path.relpath(os.path.realpath(base), os.path.realpath(scratch))
        errors = [
            (s.get("name", ""), o.get("name") or o.get("type", ""), o["failure"]["error"])
            for s in t.get("steps") or [] for o in s.get("operations") or [] if o.get("failure")
        ]
        results[rel] = ("skipped", "chainsaw skipped it") if t.get("skipped") else (
            ("failed", errors) if errors else ("passed", None))
    totals = [0, 0, 0]
    for folder in p["folders"]:
        counts = [0, 0, 0]
        lines = []
        for rel, t in sorted(p["tests"].items()):
            if t["folder"] != folder:
                continue
            if t["skip"]:
                counts[2] += 1
                lines.append(f"  skipped {rel}: {t['skip']}")
                continue
            outcome, detail = results.get(rel, ("failed", [("", "", "not in chainsaw's report (not run)")]))
            if outcome == "passed":
                counts[0] += 1
            elif outcome == "skipped":
                counts[2] += 1
                lines.append(f"  skipped {rel}: {detail}")
            else:
                counts[1] += 1
                step, op, err = detail[0]
                first = " | ".join(l.strip() for l in err.strip().splitlines()[:6])
                lines.append(f"  failed {rel} [step {step}, {op}]: {first[:600]}")
        print(f"folder {folder}: {counts[0]} passed / {counts[1]} failed / {counts[2]} skipped")
        for line in lines:
            print(line)
        totals = [a + b for a, b in zip(totals, counts)]
    print(f"chainsaw: {totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "plan":
        plan(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) == 4 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
