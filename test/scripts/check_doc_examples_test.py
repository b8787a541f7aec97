"""scripts/check_doc_examples.py catches a drifted example: a test of the check itself (CTest
scripts.doc_examples_check). It runs the check on small Markdown files written here, against the binary.

    /usr/bin/python3 test/scripts/check_doc_examples_test.py build/ultrasim"""
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check_doc_examples.py"
RUN = "$ ultrasim run --topology switch:8 --collective allreduce --algorithm ring --size 1MiB --stack ideal"
HEAD = "# ultrasim allreduce / ring on switch:8 (8 chips)"
ROW = ("        1048576       262144   float32    sum        32.35       32.41       56.72       0        32.35"
       "        19.35    59.8")


def check(binary, text):
    with tempfile.TemporaryDirectory() as tmp:
        manual = Path(tmp) / "manual.md"
        manual.write_text(text)
        r = subprocess.run([sys.executable, str(CHECK), "--manual", str(manual), binary],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr


def fence(*lines, before=""):
    return before + "```\n" + "".join(x + "\n" for x in lines) + "```\n"


def main():
    binary = sys.argv[1]
    table = ("#          size        count      type  redop     time(us) algbw(GB/s) busbw(GB/s)  #wrong"
             "    model(us)    bound(us)  %bound")
    cases = [  # (what, manual, exit status expected, text the report must hold)
        ("the exact output", fence(RUN, HEAD, table, ROW), 0, "1 examples run"),
        ("a '...' line eliding the middle", fence(RUN, HEAD, "...", ROW), 0, "0 problem(s)"),
        ("a '...' line matching no line", fence(RUN, "...", HEAD, table, ROW, "..."), 0, "0 problem(s)"),
        ("a number drifted", fence(RUN, HEAD, table, ROW.replace("32.35", "32.36", 1)), 1, "output differs"),
        ("a line missing", fence(RUN, HEAD, ROW), 1, "output differs"),
        ("an error shown for a run that succeeds", fence(RUN, "ultrasim: error: no"), 1, "output differs"),
        ("a failure shown as one", fence("$ ultrasim run --topology swich:8 --collective allreduce "
                                        "--algorithm ring --size 1", "..."), 1, "is not an error"),
        ("an unprompted command", fence("ultrasim topology trn3"), 1, "without a `$ ` prompt"),
        ("output without its command", fence(HEAD, ROW), 1, "without a `$ ` prompt"),
        ("a fence marked not run", fence("ultrasim sweep --sizes 1:4GiB:x2",
                                         before="<!-- not run: a long sweep -->\n"), 0, "1 fences marked not run"),
        ("a synopsis missing an option", fence("ultrasim tune --from ROWS [--format text|json]",
                                               before="<!-- synopsis -->\n"), 1, "lacks --output"),
        ("a synopsis with every option", fence("ultrasim tune --from ROWS [--format text|json] [-o FILE]",
                                               before="<!-- synopsis -->\n"), 0, "0 problem(s)"),
        ("a continued command", fence("$ ultrasim run --topology switch:8 --collective allreduce \\",
                                      "    --algorithm ring --size 1MiB --stack ideal", HEAD, "...", ROW), 0,
         "0 problem(s)"),
    ]
    failed = 0
    for what, text, status, fragment in cases:
        got, report = check(binary, text)
        if got != status or fragment not in report:
            failed += 1
            print(f"FAIL {what}: exit {got} (expected {status}), report lacks {fragment!r}:\n{report}")
    print(f"{len(cases) - failed} of {len(cases)} cases pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
