"""Runs every command example of the manuals and compares what it prints with the text shown.

    /usr/bin/python3 scripts/check_doc_examples.py [--only TEXT] [--list] [--verbose] [--manual FILE]...
        build/ultrasim

An example is a code fence of README.md or a */README.md (the manuals make_reference.py checks) with
lines that start with a shell prompt, `$ `: each such line is a command (continued on the next line
after a trailing backslash) and the lines up to the next prompt or the fence's end are what it prints,
stdout and stderr together as a terminal shows them. The output must match exactly (numbers included;
trailing blanks are ignored), except that a line holding only `...` (indented or not) matches any run
of lines, none included. A command must exit 0 unless its output shows `ultrasim: error:`; then it
must fail.

A fence that is not meant to run (a long sweep, a Slurm job) follows the line `<!-- not run: REASON -->`;
a synopsis (`ultrasim COMMAND [--option VALUE]...` lines) follows `<!-- synopsis -->` and must name every
option of `ultrasim COMMAND --help`, and no other. A fence that holds a command without a prompt and
without either line is a problem too, and so is one that shows ultrasim's output (`# ultrasim ...`,
`ultrasim: error: ...`) without the command: no example escapes by losing its prompt.

Each manual's examples run in order in one temporary directory, through bash, with `ultrasim` and
`build/ultrasim` the binary given and the repository's top-level entries linked in: commands read the
repository's files by their relative paths and files they write (`-o ring8.json`, `> step.json`) land
in the temporary directory and are seen by the manual's later examples. ULTRASIM_* variables of the
caller's environment are dropped. Exit 1 with a unified diff per example that drifted."""
import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_reference import ROOT, manuals  # noqa: E402  the same manuals, the same fences

NOT_RUN = re.compile(r"^<!-- not run: (.+) -->$")
SYNOPSIS = "<!-- synopsis -->"  # a fence of `ultrasim COMMAND [--option ...]` lines, held to --help
# A line in a fence that reads like a command someone would type: without a prompt or a marker, a problem.
COMMAND = re.compile(r"^(ultrasim|build/ultrasim|scripts/|/usr/bin/python3|python3|\.ci/|sbatch|"
                     r"jupyter|ULTRASIM=|mkdir|cat) ")
# ... and a line that reads like ultrasim's output: shown without the command that prints it, it could drift.
OUTPUT = re.compile(r"^(ultrasim: error: |# ultrasim )")
TIMEOUT_S = 60


def fences(text):
    """(first line number, info string, body lines, the `<!-- not run -->` reason, "synopsis" or None)."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("```"):
            i += 1
            continue
        start, j = i, i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        before = next((x.strip() for x in reversed(lines[:start]) if x.strip()), "")
        reason = m.group(1) if (m := NOT_RUN.match(before)) else "synopsis" if before == SYNOPSIS else None
        out.append((start + 1, lines[start].strip()[3:], lines[start + 1:j], reason))
        i = j + 1
    return out


def examples(body):
    """(command, expected output lines) per prompt of a fence."""
    out, i = [], 0
    while i < len(body):
        if not body[i].startswith("$ "):
            i += 1  # text before the first prompt: none in an example
            continue
        command = body[i][2:]
        while command.endswith("\\") and i + 1 < len(body):
            i += 1
            command += "\n" + body[i]  # bash reads the backslash-newline as a continuation
        i += 1
        expected = []
        while i < len(body) and not body[i].startswith("$ "):
            expected.append(body[i])
            i += 1
        out.append((command, expected))
    return out


def matches(expected, actual):
    """expected matches actual, a line `...` standing for any run of lines (none included)."""
    if not expected:
        return not actual
    if expected[0].strip() == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def clean(lines):
    lines = [x.rstrip() for x in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def workdir(binary):
    """A temporary directory that looks like the repository root, with the binary as ultrasim."""
    tmp = Path(tempfile.mkdtemp(prefix="ultrasim-doc-examples-"))
    for entry in ROOT.iterdir():
        if entry.name not in ("build", ".git") and not entry.name.startswith("build-"):
            (tmp / entry.name).symlink_to(entry)
    (tmp / "build").mkdir()
    (tmp / "build" / "ultrasim").symlink_to(binary)
    return tmp


def synopsis_problems(binary, body):
    """A synopsis must name every option of each command's --help, and no other."""
    named, command = {}, None
    for line in body:
        if m := re.match(r"^ultrasim ([\w-]+)", line):
            command = m.group(1)
        if command:  # a line that does not start a command continues the last one
            named.setdefault(command, set()).update(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line.split("#")[0]))
    problems = []
    for command, mentioned in named.items():
        help_text = subprocess.run([binary, command, "--help"], capture_output=True, text=True).stdout
        options = [set(m.group(1).split(",")) for m in re.finditer(r"^\s+(-[\w,-]+)", help_text, re.M)]
        options = [names for names in options if "--help" not in names]
        if missing := [max(names, key=len) for names in options if not names & mentioned]:
            problems.append(f"`ultrasim {command}` lacks {', '.join(missing)}")
        if unknown := sorted(mentioned - set().union(*options)):
            problems.append(f"`ultrasim {command}` has no {', '.join(unknown)}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="the ultrasim binary")
    parser.add_argument("--only", default="", help="run only the examples whose manual or command has TEXT")
    parser.add_argument("--list", action="store_true", help="list the examples and the fences not run")
    parser.add_argument("--verbose", action="store_true", help="print each example's wall time")
    parser.add_argument("--manual", action="append", type=Path, help="check this Markdown file instead of "
                        "the manuals (repeatable; its examples still run from the repository root)")
    args = parser.parse_args()
    binary = Path(args.binary).resolve()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ULTRASIM")}
    problems, ran, unrun, began = [], 0, [], time.monotonic()
    for md in [m.resolve() for m in args.manual] if args.manual else manuals():
        name = md.relative_to(ROOT) if md.is_relative_to(ROOT) else md
        todo = []
        for line, info, body, reason in fences(md.read_text()):
            found = examples(body)
            if reason == "synopsis":
                problems += [f"{name}:{line}: synopsis: {x} (`ultrasim COMMAND --help`)"
                             for x in synopsis_problems(binary, body)]
            elif reason:
                unrun.append(f"{name}:{line}: {reason}")
            elif found:
                todo += [(line, command, expected) for command, expected in found]
            elif any(COMMAND.match(x) or OUTPUT.match(x) for x in body):
                problems.append(f"{name}:{line}: a command or ultrasim's output without a `$ ` prompt: make the "
                                "fence an example, or put `<!-- not run: REASON -->` before it")
        todo = [t for t in todo if args.only in str(name) or args.only in t[1]]
        if args.list:
            for line, command, _ in todo:
                print(f"{name}:{line}: $ {command.splitlines()[0]}")
            continue
        if not todo:
            continue
        tmp = workdir(binary)
        env["PATH"] = f"{tmp / 'build'}{os.pathsep}{os.environ.get('PATH', '')}"
        try:
            for line, command, expected in todo:
                start = time.monotonic()
                # In a session of its own, so that a timeout ends the command's children too.
                run = subprocess.Popen(["bash", "-o", "pipefail", "-c", command], cwd=tmp, env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       errors="replace", start_new_session=True)
                try:
                    actual, status = run.communicate(timeout=TIMEOUT_S)[0].splitlines(), run.returncode
                except subprocess.TimeoutExpired:
                    os.killpg(run.pid, signal.SIGKILL)
                    run.communicate()
                    actual, status = [f"(killed after {TIMEOUT_S} s)"], -1
                ran += 1
                if args.verbose:
                    print(f"{time.monotonic() - start:6.2f} s  {name}:{line}: $ {command.splitlines()[0]}")
                shown = clean(expected)
                failing = any(x.startswith("ultrasim: error:") for x in shown)
                where = f"{name}:{line}: $ {command}"
                if not matches(shown, clean(actual)):
                    diff = difflib.unified_diff(shown, clean(actual), "shown", "printed", lineterm="", n=1)
                    problems.append(f"{where}\n  output differs:\n" + "\n".join("    " + x for x in diff))
                elif failing != (status != 0):
                    problems.append(f"{where}\n  exit status {status}, but the output shown "
                                    f"{'is' if failing else 'is not'} an error")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.list:
        print("not run:\n" + "\n".join(f"  {x}" for x in unrun))
    for problem in problems:
        print(f"check_doc_examples: {problem}", file=sys.stderr)
    if args.list:
        return 1 if problems else 0
    print(f"check_doc_examples: {ran} examples run in {time.monotonic() - began:.1f} s, {len(unrun)} fences "
          f"marked not run, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
