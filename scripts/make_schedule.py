#!/usr/bin/python3
"""Writes textbook collective algorithms as ultrasim schedule files (JSON), for any chip count.

    scripts/make_schedule.py ring-allreduce 8 -o collectives/schedules/ring_allreduce_8.json
    build/ultrasim run --topology switch:8 --collective allreduce \\
        --algorithm file:collectives/schedules/ring_allreduce_8.json --size 1MiB

The format is described in collectives/README.md, "Bring your own algorithm as data". Each generator
returns the list of steps; a step is a list of transfers {src, dst, chunk, [dst_chunk,] op} that run
concurrently.
"""
import argparse
import json
import sys


def transfer(src, dst, chunk, op, dst_chunk=None):
    t = {"src": src, "dst": dst, "chunk": chunk}
    if dst_chunk is not None and dst_chunk != chunk:
        t["dst_chunk"] = dst_chunk
    t["op"] = op
    return t


def ring_allreduce(p):
    """Patarasuk & Yuan 2009: p-1 reduce-scatter steps, then p-1 all-gather steps, around the ring.
    In reduce-scatter step s chip r sends chunk r-s to r+1, which adds it; after them chip r holds the
    sum of chunk r+1, and in all-gather step s it forwards chunk r+1-s, which r+1 keeps."""
    steps = [[transfer(r, (r + 1) % p, (r - s) % p, "reduce") for r in range(p)] for s in range(p - 1)]
    steps += [[transfer(r, (r + 1) % p, (r + 1 - s) % p, "copy") for r in range(p)] for s in range(p - 1)]
    return {"collective": "allreduce", "chips": p, "chunks": p, "steps": steps}


def recursive_doubling_allgather(p):
    """Thakur, Rabenseifner & Gropp 2005, p a power of two: in step s chip r swaps every part it holds
    (the 2^s parts of its aligned group) with chip r xor 2^s."""
    if p & (p - 1):
        sys.exit("make_schedule.py: recursive-doubling-allgather needs a power of two, not %d" % p)
    steps = []
    for s in range(p.bit_length() - 1):
        distance = 1 << s
        steps.append([transfer(r, r ^ distance, part, "copy")
                      for r in range(p)
                      for part in range(r & ~(distance - 1), (r & ~(distance - 1)) + distance)])
    return {"collective": "allgather", "chips": p, "steps": steps}


def pairwise_alltoall(p):
    """Thakur, Rabenseifner & Gropp 2005: in step k-1 (k = 1..p-1) chip r sends its part for chip r+k
    (slot r+k) to that chip, landing in its slot p+r (what it received from r). The own part (slot r to
    p+r) is copied locally by ultrasim before the first step."""
    steps = [[transfer(r, (r + k) % p, (r + k) % p, "copy", dst_chunk=p + r) for r in range(p)]
             for k in range(1, p)]
    return {"collective": "alltoall", "chips": p, "steps": steps}


GENERATORS = {
    "ring-allreduce": ring_allreduce,
    "recursive-doubling-allgather": recursive_doubling_allgather,
    "pairwise-alltoall": pairwise_alltoall,
}


def dump(schedule):
    """JSON with one transfer per line: diffable and still readable for hundreds of transfers."""
    head = {k: v for k, v in schedule.items() if k != "steps"}
    lines = ["{"]
    lines += ["  %s: %s," % (json.dumps(k), json.dumps(v)) for k, v in head.items()]
    lines.append('  "steps": [')
    for i, step in enumerate(schedule["steps"]):
        lines.append("    [")
        lines += ["      %s%s" % (json.dumps(t), "," if j + 1 < len(step) else "") for j, t in enumerate(step)]
        lines.append("    ]%s" % ("," if i + 1 < len(schedule["steps"]) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("algorithm", choices=sorted(GENERATORS))
    parser.add_argument("chips", type=int, help="number of chips p (>= 1)")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")
    args = parser.parse_args()
    if args.chips < 1:
        parser.error("chips must be at least 1")
    schedule = {"name": "%s, %d chips (scripts/make_schedule.py)" % (args.algorithm, args.chips)}
    schedule.update(GENERATORS[args.algorithm](args.chips))
    text = dump(schedule)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
