#!/usr/bin/python3
"""Writes small Chakra execution traces (one file per rank, PREFIX.<rank>.et), the inputs of
`ultrasim workload chakra:PREFIX` and of its tests.

    scripts/make_chakra_trace.py dp PREFIX --ranks 8 --size 64MiB --compute-us 100,200
    scripts/make_chakra_trace.py pipeline|ring|alltoall|groups PREFIX [--ranks N] [--size BYTES] [--gzip]

Shapes:
  dp        a data-parallel step: forward compute, backward compute, an all-reduce of SIZE after it
  pipeline  compute, then a send of SIZE to the next rank and a receive from the previous (a chain)
  ring      compute, then a send of SIZE to the next rank and a receive from the previous, around a ring
  alltoall  compute, then an all-to-all of SIZE
  groups    two process groups named in the metadata (the even and the odd ranks), an all-reduce of SIZE
            on each after compute, then a barrier of every rank

Each file is a GlobalMetadata message and then Node messages, each after its length as a varint32, with
the schema of workloads/chakra/et_def.proto (wire-compatible with mlcommons/chakra's); protoc compiles it
for Python into a temporary folder (Debian: protobuf-compiler, python3-protobuf).
"""
import argparse
import gzip
import importlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "workloads" / "chakra" / "et_def.proto"


def load_schema():
    out = Path(tempfile.mkdtemp(prefix="ultrasim-chakra-"))
    subprocess.run(["protoc", f"--proto_path={SCHEMA.parent}", f"--python_out={out}", SCHEMA.name], check=True)
    sys.path.insert(0, str(out))
    return importlib.import_module("et_def_pb2")


def parse_bytes(text):
    m = re.fullmatch(r"(\d+)(KiB|MiB|GiB)?", text)
    if not m:
        raise SystemExit(f"make_chakra_trace: a size such as 4096 or 64MiB, not '{text}'")
    return int(m.group(1)) * {None: 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m.group(2)]


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


class Rank:
    def __init__(self, pb, groups):
        self.pb, self.nodes = pb, []
        self.metadata = pb.GlobalMetadata(version="0.0.4")
        for name, ranks in groups.items():
            attr = self.metadata.attr.add(name=f"pg:{name}")
            attr.int64_list.values.extend(ranks)

    def node(self, name, kind, deps=(), duration_us=0, **attrs):
        n = self.pb.Node(id=len(self.nodes), name=name, type=kind, duration_micros=duration_us)
        n.data_deps.extend(deps)
        for key, value in attrs.items():
            a = n.attr.add(name=key)
            if isinstance(value, str):
                a.string_val = value
            else:
                a.int64_val = value
        self.nodes.append(n)
        return n.id

    def write(self, path, compress):
        data = b"".join(varint(m.ByteSize()) + m.SerializeToString() for m in [self.metadata] + self.nodes)
        (gzip.open if compress else open)(path, "wb").write(data)


def build(pb, shape, ranks, size, compute_us):
    groups = {"even": list(range(0, ranks, 2)), "odd": list(range(1, ranks, 2))} if shape == "groups" else {}
    out = []
    for r in range(ranks):
        rank = Rank(pb, groups)
        first = rank.node("fwd", pb.COMP_NODE, duration_us=compute_us[0])
        if shape == "dp":
            bwd = rank.node("bwd", pb.COMP_NODE, [first], duration_us=compute_us[1])
            rank.node("grad all-reduce", pb.COMM_COLL_NODE, [bwd], comm_type=pb.ALL_REDUCE, comm_size=size)
        elif shape in ("pipeline", "ring"):
            nxt, prev = (r + 1) % ranks, (r - 1) % ranks
            if shape == "ring" or r + 1 < ranks:
                rank.node("send", pb.COMM_SEND_NODE, [first], comm_dst=nxt, comm_size=size, comm_tag=7)
            if shape == "ring" or r > 0:
                rank.node("recv", pb.COMM_RECV_NODE, [first], comm_src=prev, comm_size=size, comm_tag=7)
        elif shape == "alltoall":
            rank.node("dispatch", pb.COMM_COLL_NODE, [first], comm_type=pb.ALL_TO_ALL, comm_size=size)
        elif shape == "groups":
            mine = rank.node("group all-reduce", pb.COMM_COLL_NODE, [first], comm_type=pb.ALL_REDUCE,
                             comm_size=size, pg_name="even" if r % 2 == 0 else "odd")
            rank.node("barrier", pb.COMM_COLL_NODE, [mine], comm_type=pb.BARRIER, comm_size=0)
        out.append(rank)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shape", choices=["dp", "pipeline", "ring", "alltoall", "groups"])
    parser.add_argument("prefix", help="writes PREFIX.0.et ... PREFIX.<N-1>.et")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--size", default="64MiB", help="bytes of the collective or send (4096, 64MiB)")
    parser.add_argument("--compute-us", default="100,200", help="forward[,backward] compute, microseconds")
    parser.add_argument("--gzip", action="store_true", help="write PREFIX.<rank>.et.gz")
    args = parser.parse_args()
    if args.ranks < 2:
        raise SystemExit("make_chakra_trace: --ranks must be at least 2")
    compute = [int(x) for x in args.compute_us.split(",")] + [0]
    pb = load_schema()
    for r, rank in enumerate(build(pb, args.shape, args.ranks, parse_bytes(args.size), compute)):
        rank.write(f"{args.prefix}.{r}.et" + (".gz" if args.gzip else ""), args.gzip)


if __name__ == "__main__":
    main()
