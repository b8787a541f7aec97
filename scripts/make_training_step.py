"""Writes a training-step workload (ultrasim workload FILE) for a dense transformer under a TP x DP layout.

    /usr/bin/python3 scripts/make_training_step.py --topology trn3 --tp 4 --dp 36 --layers 4 \\
        --hidden 8192 --ffn 28672 --seq 4096 --micro-batch 1 > step.json

The model, per layer: attention projections 4 H^2 parameters (Q, K, V, O; no grouped-query savings) and a
gated MLP 3 H F, each sharded over the tp chips of a group. A data-parallel replica processes
T = seq x micro-batch tokens per step.
  forward FLOPs per layer and chip  = 2 T (4 H^2 + 3 H F) / tp + 2 T seq H / tp  (causal attention)
  backward                          = 2 x forward
  tensor parallelism (tp > 1): two all-reduces of T H x 2 bytes (bf16 activations) per layer, after
      attention and after the MLP, forward and backward, on the tp groups
  data parallelism (dp > 1): each layer's gradients, (4 H^2 + 3 H F) / tp x 2 bytes, all-reduced on the dp
      groups in the stage of the next layer's backward compute (DDP's overlap, one bucket per layer); the
      first layer's bucket is the exposed tail.
Stages, in order: per layer "fwd L" (compute) and "fwd L tp" (its two all-reduces); then from the last
layer down "bwd L" (compute, overlapping the dp all-reduce of layer L+1) and "bwd L tp"; then "grads 0".
Pipeline parallelism is not generated (pp = 1)."""
import argparse
import json
import sys


def step(args):
    H, F, T, S = args.hidden, args.ffn, args.seq * args.micro_batch, args.seq
    params_layer = 4 * H * H + 3 * H * F
    forward = 2 * T * params_layer / args.tp + 2 * T * S * H / args.tp
    activation = T * H * 2
    gradients = params_layer // args.tp * 2
    layout = f"tp={args.tp},dp={args.dp}"

    def tp_pair():
        return [{"collective": "allreduce", "algorithm": args.tp_algorithm, "size": activation, "groups": "tp"}] * 2

    def dp_bucket():
        return [{"collective": "allreduce", "algorithm": args.dp_algorithm, "size": gradients, "groups": "dp"}]

    stages = []
    for layer in range(args.layers):
        stages.append({"name": f"fwd {layer}", "compute_flops": forward})
        if args.tp > 1:
            stages.append({"name": f"fwd {layer} tp", "collectives": tp_pair()})
    for layer in reversed(range(args.layers)):
        stage = {"name": f"bwd {layer}", "compute_flops": 2 * forward}
        if args.dp > 1 and layer + 1 < args.layers:
            stage["collectives"] = dp_bucket()
        stages.append(stage)
        if args.tp > 1:
            stages.append({"name": f"bwd {layer} tp", "collectives": tp_pair()})
    if args.dp > 1:
        stages.append({"name": "grads 0", "collectives": dp_bucket()})
    return {
        "workload": "training",
        "description": (f"{args.layers} transformer layers (hidden {H}, ffn {F}, {params_layer / 1e6:.1f} M "
                        f"parameters each), {args.seq} x {args.micro_batch} tokens per data-parallel replica, "
                        f"tp={args.tp} x dp={args.dp}; from scripts/make_training_step.py"),
        "topology": args.topology,
        "layout": layout,
        "tokens_per_step": T * args.dp,
        "stages": stages,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topology", default="trn3")
    parser.add_argument("--tp", type=int, default=4)
    parser.add_argument("--dp", type=int, default=36)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=8192)
    parser.add_argument("--ffn", type=int, default=28672)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--micro-batch", type=int, default=1)
    parser.add_argument("--tp-algorithm", default="ring")
    parser.add_argument("--dp-algorithm", default="ring")
    args = parser.parse_args()
    for name in ("tp", "dp", "layers", "hidden", "ffn", "seq", "micro_batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    json.dump(step(args), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
