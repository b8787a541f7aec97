#!/usr/bin/python3
"""Writes small Chakra execution traces (one file per rank, PREFIX.<rank>.et), the inputs of
`ultrasim workload chakra:PREFIX` and of its tests.

    scripts/make_chakra_trace.py dp PREFIX --ranks 8 --size 64MiB --compute-us 100,200
    scripts/make_chakra_trace.py pipeline|ring|alltoall|groups PREFIX [--ranks N] [--size BYTES] [--gzip]
    scripts/make_chakra_trace.py micro-allgather PREFIX --ranks 8 --size 1MiB

Shapes:
  dp        a data-parallel step: forward compute, backward compute, an all-reduce of SIZE after it
  pipeline  compute, then a send of SIZE to the next rank and a receive from the previous (a chain)
  ring      compute, then a send of SIZE to the next rank and a receive from the previous, around a ring
  alltoall  compute, then an all-to-all of SIZE
  groups    two process groups named in the metadata (the even and the odd ranks), an all-reduce of SIZE
            on each after compute, then a barrier of every rank
  overlap   a backward compute beside an all-reduce of SIZE: no dependency between them
  dag       a training step with parallel branches: forward; --layers backward layers (2), each followed by the
            all-reduce of its gradients (SIZE) beside the next layer's backward; an optimizer step on the
            host (is_cpu_op) once both all-reduces are done; a host-side data loader beside it all
  micro-allreduce, micro-allgather, micro-reducescatter, micro-alltoall
            ASTRA-sim's microbenchmarks as its generator scripts write them
            (examples/workload/microbenchmarks/generator_scripts/*.py): per rank one COMM_COLL_NODE,
            id = the rank, attributes is_cpu_op (false), comm_type and comm_size (SIZE), version 0.0.4
  pytorch   what Chakra's PyTorch converter writes: a process_group:init metadata node naming group "0"
            (every rank) and group "1" (the even ranks); the host's c10d call (a COMM_COLL_NODE with
            is_cpu_op) and its kernel (an all-reduce of SIZE on group "1", even ranks only); a memory load
            of SIZE; a host op
  cycle     two compute nodes whose control dependencies form a cycle
  deadlock  each rank receives from the previous rank before it sends to the next (a control dependency):
            no rank ever sends
  unmatched compute, then rank 0 sends SIZE to rank 1, which has no receive for it
  unsized   compute, then an all-reduce without comm_size
--pg-name NAME and --involved-dim true,false,... are set on every collective kernel written.

Each file is a GlobalMetadata message and then Node messages, each after its length as a varint32, with
the schema of workloads/chakra/et_def.proto (wire-compatible with mlcommons/chakra's); protoc compiles it
for Python into a temporary folder (Debian: protobuf-compiler, python3-protobuf).
"""
import argparse
import gzip
import importlib
import json
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


MICRO = {"micro-allreduce": "ALL_REDUCE", "micro-allgather": "ALL_GATHER",  # shape: comm_type
         "micro-reducescatter": "REDUCE_SCATTER", "micro-alltoall": "ALL_TO_ALL"}


class Rank:
    pg_name = None
    involved_dim = None

    def __init__(self, pb, groups):
        self.pb, self.nodes = pb, []
        self.metadata = pb.GlobalMetadata(version="0.0.4")
        for name, ranks in groups.items():
            attr = self.metadata.attr.add(name=f"pg:{name}")
            attr.int64_list.values.extend(ranks)

    def node(self, name, kind, deps=(), duration_us=0, ctrl=(), node_id=None, inputs=None, **attrs):
        n = self.pb.Node(id=len(self.nodes) if node_id is None else node_id, name=name, type=kind,
                         duration_micros=duration_us)
        n.data_deps.extend(deps)
        n.ctrl_deps.extend(ctrl)
        if inputs is not None:
            n.inputs.values = inputs
        if kind == self.pb.COMM_COLL_NODE and not attrs.get("is_cpu_op"):
            if self.pg_name is not None:
                attrs.setdefault("pg_name", self.pg_name)
            if self.involved_dim is not None:
                attrs["involved_dim"] = self.involved_dim
        for key, value in attrs.items():
            a = n.attr.add(name=key)
            if isinstance(value, bool):
                a.bool_val = value
            elif isinstance(value, list):
                a.bool_list.values.extend(value)
            elif isinstance(value, str):
                a.string_val = value
            else:
                a.int64_val = value
        self.nodes.append(n)
        return n.id

    def write(self, path, compress):
        data = b"".join(varint(m.ByteSize()) + m.SerializeToString() for m in [self.metadata] + self.nodes)
        (gzip.open if compress else open)(path, "wb").write(data)


def micro(pb, shape, r, ranks, size):
    """ASTRA-sim's microbenchmark: one collective, the node's id the rank's number."""
    rank = Rank(pb, {})
    name = MICRO[shape].lower()  # ASTRA-sim's coll_name: all_gather, ...
    rank.node(f"{name}_{ranks}npus_{size >> 20}MB", pb.COMM_COLL_NODE, node_id=r, is_cpu_op=False,
              comm_type=getattr(pb, MICRO[shape]), comm_size=size)
    return rank


def pytorch(pb, r, ranks, size, compute_us):
    """The node kinds Chakra's PyTorch converter writes."""
    rank = Rank(pb, {})
    groups = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "ranks": [],
               "group_size": ranks, "group_count": 2},
              {"pg_name": "1", "pg_desc": "undefined", "backend_config": "cuda:nccl",
               "ranks": list(range(0, ranks, 2)), "group_size": (ranks + 1) // 2, "group_count": 2}]
    init = rank.node("## process_group:init ##", pb.METADATA_NODE, is_cpu_op=True,
                     inputs=str([json.dumps(groups)]))
    fwd = rank.node("aten::linear", pb.COMP_NODE, [init], duration_us=compute_us[0], is_cpu_op=False)
    load = rank.node("aten::copy_ (HBM load)", pb.MEM_LOAD_NODE, [init], tensor_size=size, is_cpu_op=False)
    host = rank.node("optimizer.step", pb.COMP_NODE, [init], duration_us=compute_us[1], is_cpu_op=True)
    if r % 2 == 0:
        call = rank.node("c10d::allreduce_", pb.COMM_COLL_NODE, [fwd], duration_us=5, is_cpu_op=True)
        rank.node("ncclDevKernel_AllReduce_Sum_f32_RING_LL", pb.COMM_COLL_NODE, [call, load], is_cpu_op=False,
                  comm_type=pb.ALL_REDUCE, comm_size=size, pg_name="1")
    return rank


def build(pb, shape, ranks, size, compute_us, layers=2):
    if shape in MICRO:
        return [micro(pb, shape, r, ranks, size) for r in range(ranks)]
    if shape == "pytorch":
        return [pytorch(pb, r, ranks, size, compute_us) for r in range(ranks)]
    groups = {"even": list(range(0, ranks, 2)), "odd": list(range(1, ranks, 2))} if shape == "groups" else {}
    out = []
    for r in range(ranks):
        rank = Rank(pb, groups)
        if shape == "deadlock":
            recv = rank.node("recv", pb.COMM_RECV_NODE, comm_src=(r - 1) % ranks, comm_size=size, comm_tag=3)
            rank.node("send", pb.COMM_SEND_NODE, ctrl=[recv], comm_dst=(r + 1) % ranks, comm_size=size, comm_tag=3)
            out.append(rank)
            continue
        if shape == "cycle":
            rank.node("a", pb.COMP_NODE, ctrl=[1], duration_us=compute_us[0])
            rank.node("b", pb.COMP_NODE, ctrl=[0], duration_us=compute_us[0])
            out.append(rank)
            continue
        first = rank.node("fwd", pb.COMP_NODE, duration_us=compute_us[0])
        if shape == "unmatched" and r == 0:
            rank.node("send", pb.COMM_SEND_NODE, [first], comm_dst=1, comm_size=size, comm_tag=7)
        elif shape == "unsized":
            rank.node("grad all-reduce", pb.COMM_COLL_NODE, [first], comm_type=pb.ALL_REDUCE)
        elif shape == "dp":
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
        elif shape == "overlap":
            rank.node("bwd", pb.COMP_NODE, duration_us=compute_us[1])
            rank.node("grad all-reduce", pb.COMM_COLL_NODE, comm_type=pb.ALL_REDUCE, comm_size=size)
        elif shape == "dag":
            load = rank.node("data loader", pb.COMP_NODE, duration_us=compute_us[0], is_cpu_op=True)
            previous, reduces = first, []
            for layer in range(layers, 0, -1):
                previous = rank.node(f"bwd layer {layer}", pb.COMP_NODE, [previous], duration_us=compute_us[1])
                reduces.append(rank.node(f"all-reduce layer {layer}", pb.COMM_COLL_NODE, [previous],
                                         comm_type=pb.ALL_REDUCE, comm_size=size))
            rank.node("optimizer", pb.COMP_NODE, reduces + [load], duration_us=compute_us[0], is_cpu_op=True)
        elif shape == "groups":
            mine = rank.node("group all-reduce", pb.COMM_COLL_NODE, [first], comm_type=pb.ALL_REDUCE,
                             comm_size=size, pg_name="even" if r % 2 == 0 else "odd")
            rank.node("barrier", pb.COMM_COLL_NODE, [mine], comm_type=pb.BARRIER, comm_size=0)
        out.append(rank)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shape", choices=["dp", "pipeline", "ring", "alltoall", "groups", "overlap", "dag",
                                          "pytorch", "cycle", "deadlock", "unmatched", "unsized", *MICRO])
    parser.add_argument("prefix", help="writes PREFIX.0.et ... PREFIX.<N-1>.et")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--size", default="64MiB", help="bytes of the collective or send (4096, 64MiB)")
    parser.add_argument("--compute-us", default="100,200", help="forward[,backward] compute, microseconds")
    parser.add_argument("--gzip", action="store_true", help="write PREFIX.<rank>.et.gz")
    parser.add_argument("--layers", type=int, default=2, help="dag: backward layers (default 2)")
    parser.add_argument("--pg-name", help="pg_name of every collective kernel")
    parser.add_argument("--involved-dim", help="involved_dim of every collective kernel: true,false,...")
    args = parser.parse_args()
    Rank.pg_name = args.pg_name
    if args.involved_dim:
        Rank.involved_dim = [word == "true" for word in args.involved_dim.split(",")]
    if args.ranks < 2:
        raise SystemExit("make_chakra_trace: --ranks must be at least 2")
    compute = [int(x) for x in args.compute_us.split(",")] + [0]
    pb = load_schema()
    for r, rank in enumerate(build(pb, args.shape, args.ranks, parse_bytes(args.size), compute, args.layers)):
        rank.write(f"{args.prefix}.{r}.et" + (".gz" if args.gzip else ""), args.gzip)


if __name__ == "__main__":
    main()
