"""`pytorch-tutor capstone <stage>` (also `python -m capstone <stage>`).

The stages run in the order the course builds them, each reading the previous one's
artifacts from the workspace:

    corpus -> tokenize -> train -> eval -> sample
    train -> finetune | export | quantize -> serve                      (Capstone II)

Progress goes to stderr and the final summary to stdout, so `... > summary.txt` keeps only
the results. User mistakes (a missing artifact, a bad option) print one line and return a
non-zero status instead of a traceback. Stage modules are imported inside the handlers, so
importing this file (and `--help`) never loads torch.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import MISSING, fields

from capstone import CapstoneError
from capstone.cli_progress import add_hidden_options
from capstone.config import (RECIPE_DROPOUT, EvalConfig, GPTConfig, LoRAConfig, SamplingConfig,
                             TrainConfig)
from capstone.corpus import VAL_FRACTION
from capstone.workspace import DEFAULT_WORKSPACE, Workspace
from capstone.workspace import log_to_stderr as _err

# The options `train` exposes (the rest of each dataclass keeps its default).
MODEL_OPTIONS = ("context", "d_model", "n_layer", "n_head", "dropout")
TRAIN_OPTIONS = ("steps", "batch_size", "lr", "min_lr", "warmup_steps", "weight_decay", "grad_clip",
                 "seed", "log_every", "eval_every", "checkpoint_every")
SOURCES = ("auto", "export", "int8")  # serve's model sources (serve.py checks the same names)
PACKAGES = ("reference", "mine")


def add_options(parser, config_class, names=None, *, defaults=None, unset: bool = False) -> None:
    """One `--field-name` per dataclass field in `names` (all by default): its type, its help
    and "(default X)" come from the dataclass (`defaults` overrides what is shown and used).
    unset=True leaves an omitted option None, so the caller can tell "given" from "default"."""
    defaults = defaults or {}
    for f in fields(config_class):
        if names is not None and f.name not in names:
            continue
        default = defaults.get(f.name, f.default)
        assert default is not MISSING, f"{config_class.__name__}.{f.name} has no default"
        parser.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=type(default),
                            default=None if unset else default, metavar="N" if type(default) is int else "X",
                            help=f"{f.metadata.get('help', f.name)} (default {default:g})"
                            if isinstance(default, float) else
                            f"{f.metadata.get('help', f.name)} (default {default})")


def config_from(args: argparse.Namespace, config_class):
    """The dataclass built from the parsed options of that name."""
    return config_class(**{f.name: getattr(args, f.name) for f in fields(config_class)
                           if getattr(args, f.name, None) is not None})


# --------------------------------------------------------------------------- handlers


def cmd_corpus(args: argparse.Namespace) -> int:
    from capstone.corpus import build

    ws = Workspace(args.workspace)
    meta = build(ws, args.corpus, args.val_fraction)
    version = f" (Python {meta['python_version']})" if "python_version" in meta else ""
    print(f"corpus: {meta['source']}{version}, {meta['bytes']:,} bytes, sha256 {meta['sha256'][:12]}\n"
          f"split at byte {meta['split_at_byte']:,}: train {meta['train']['bytes']:,} bytes, "
          f"val {meta['val']['bytes']:,} bytes\n"
          f"wrote {ws.corpus_meta.parent}")
    return 0


def cmd_tokenize(args: argparse.Namespace) -> int:
    from capstone.data import build

    ws = Workspace(args.workspace)
    meta = build(ws, args.vocab_size, log=_err)
    print(f"tokenizer: {meta['tokenizer']['merges']} merges in {meta['tokenizer']['train_seconds']:.2f}s "
          f"-> {ws.tokenizer}")
    for name in ("train", "val"):
        m = meta[name]
        print(f"{name}: {m['tokens']:,} tokens from {m['bytes']:,} bytes "
              f"({m['bytes_per_token']:.3f} bytes/token)")
    if args.compare_hf:
        from capstone.bpe import Tokenizer, compare_hf
        from capstone.corpus import load_split

        train_text, val_text, _ = load_split(ws)
        result = compare_hf(train_text, val_text, Tokenizer.load(ws.tokenizer))
        if isinstance(result, str):
            _err(result)
        else:
            print(f"compression on val, vocab {result['hf_tokenizers']['vocab_size']}: ours "
                  f"{result['ours']['bytes_per_token']:.3f} bytes/token, HF tokenizers "
                  f"{result['hf_tokenizers']['bytes_per_token']:.3f} bytes/token")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    import torch

    from capstone.cli_progress import again, interrupted, long_run, resumed_run
    from capstone.data import load_split_tokens
    from capstone.train import train

    ws = Workspace(args.workspace)
    if args.threads:
        torch.set_num_threads(args.threads)
    given = {name: getattr(args, name) for name in MODEL_OPTIONS + TRAIN_OPTIONS
             if getattr(args, name) is not None}
    if args.resume:
        if given:
            raise CapstoneError("--resume continues the saved run with its own settings; drop "
                                + ", ".join("--" + n.replace("_", "-") for n in given))
        model_config = config = None
        total, tokens_per_step, first_step = resumed_run(ws)
    else:
        _, _, data_meta = load_split_tokens(ws)
        model_config = GPTConfig(**({"vocab_size": data_meta["vocab_size"], "dropout": RECIPE_DROPOUT}
                                    | {k: v for k, v in given.items() if k in MODEL_OPTIONS}))
        config = TrainConfig(**{k: v for k, v in given.items() if k in TRAIN_OPTIONS})
        total, tokens_per_step, first_step = config.steps, config.batch_size * model_config.context, 0
    stop_at = first_step + args.stop_after if args.stop_after is not None else None
    with long_run(args, "train", total, tokens_per_step, first_step, stop_at) as (log, on_step, stop):
        try:
            summary = train(ws, model_config, config, resume=args.resume, stop_after=args.stop_after,
                            time_budget=args.time_budget, log=log, on_step=on_step)
        except KeyboardInterrupt:  # the second Ctrl-C: no checkpoint of this moment
            _err("aborted: the last periodic checkpoint stays; continue from it with "
                 f"`{again(args, 'train', '--resume')}`")
            return 130
    if stop.requested and not summary["finished"]:
        return interrupted(args, summary["step"], summary["steps"])
    state = "finished" if summary["finished"] else "stopped early (continue with --resume)"
    loss, rate = summary["last_train_loss"], summary["tokens_per_second_this_run"]
    print(f"train: step {summary['step']}/{summary['steps']} {state}; last train loss "
          f"{'n/a' if loss is None else f'{loss:.4f}'}, "
          f"val estimate {summary['val_loss_estimate']:.4f} nats/token\n"
          f"{summary['parameters']:,} parameters, {summary['training_seconds']:.0f}s of training, "
          f"{'n/a' if rate is None else f'{rate / 1000:.1f}k'} tokens/s on {summary['threads']} "
          f"thread{'' if summary['threads'] == 1 else 's'}\n"
          f"wrote {ws.checkpoint}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from capstone.evaluate import evaluate

    ws = Workspace(args.workspace)
    r = evaluate(ws, config_from(args, EvalConfig), log=_err)
    print(f"validation, {r['val_tokens_scored']:,} tokens ({r['val_bytes_scored']:,} bytes), "
          f"checkpoint step {r['checkpoint_step']}, context {r['context']}, stride {r['stride']}:")
    for name in ("model", "bigram", "unigram"):
        m = r[name]
        k = f"  (add-k, k={m['k']:.3g})" if "k" in m else ""
        print(f"  {name:<8} {m['nats_per_token']:.4f} nats/token  {m['bits_per_byte']:.4f} bits/byte{k}")
    gap = r["gap_to_bigram"]  # bigram minus model: positive when the model is better
    verdict = (f"model beats the best bigram by {gap:.4f} nats/token" if gap > 0 else
               f"model is {-gap:.4f} nats/token worse than the best bigram (train longer, or check the data)")
    print(f"  {verdict}")
    print(beside_the_references(r, "your package" if args.package == "mine" else "this run"))
    print(f"wrote {ws.eval_report}")
    return 0


# The figures a run is compared with (capstone/README.md): nats/token at stride 64 for the model
# and the best add-k bigram. The reference's are this package's default recipe on the default
# corpus; the course's are the outline's (another corpus: compare the gaps, not the values).
REFERENCE_FIGURES = {"the reference (capstone/)": (2.631, 3.623), "the course": (2.946, 3.669)}


def beside_the_references(r: dict, label: str) -> str:
    """This evaluation's figures beside the reference package's and the course's, as a small table."""
    rows = [(label, r["model"]["nats_per_token"], r["bigram"]["nats_per_token"])]
    rows += [(name, model, bigram) for name, (model, bigram) in REFERENCE_FIGURES.items()]
    width = max(len(name) for name, _, _ in rows)
    lines = [f"  {'':<{width}}  model  bigram  below the bigram"]
    lines += [f"  {name:<{width}}  {model:5.3f}  {bigram:6.3f}  {bigram - model:16.3f}" for name, model, bigram in rows]
    if (r["context"], r["stride"]) != (GPTConfig.context, EvalConfig.stride):
        lines.append(f"  (the other rows are for context {GPTConfig.context} at stride {EvalConfig.stride}; "
                     f"this run is context {r['context']}, stride {r['stride']})")
    return "nats/token on validation:\n" + "\n".join(lines)


def cmd_sample(args: argparse.Namespace) -> int:
    from capstone.sample import sample

    text = sample(Workspace(args.workspace), args.prompt, config_from(args, SamplingConfig),
                  use_cache=not args.no_cache)
    print(text)
    return 0


def cmd_finetune(args: argparse.Namespace) -> int:
    from capstone.cli_progress import again, interrupted, long_run, resumed_finetune, trained_context
    from capstone.lora import finetune_workspace

    ws = Workspace(args.workspace)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    given = [f.name for f in fields(LoRAConfig) if getattr(args, f.name) is not None]
    if args.resume:
        if given:
            raise CapstoneError("--resume continues the saved fine-tune with its own settings; drop "
                                + ", ".join("--" + n.replace("_", "-") for n in given))
        config = None
        total, tokens_per_step, first_step = resumed_finetune(ws)
    else:
        config = config_from(args, LoRAConfig)
        total, tokens_per_step, first_step = config.steps, config.batch_size * trained_context(ws), 0
    stop_at = first_step + args.stop_after if args.stop_after is not None else None
    with long_run(args, "finetune", total, tokens_per_step, first_step, stop_at) as (log, on_step, stop):
        try:
            r = finetune_workspace(ws, config, log=log, on_step=on_step, resume=args.resume,
                                   stop_after=args.stop_after)
        except KeyboardInterrupt:  # the second Ctrl-C: no checkpoint of this moment
            _err("aborted: no checkpoint of this fine-tune was written (a stopped earlier one stays; "
                 f"`{again(args, 'finetune', '--resume')}` continues that, `{again(args, 'finetune')}` starts again)")
            return 130
    done = "" if r["finished"] else f" of {r['total_steps']}"
    print(f"LoRA rank {r['rank']}: {r['trainable_parameters']:,} trainable parameters, base frozen\n"
          f"fine-tuned {r['steps']}{done} steps on the first {r['finetune_tokens']:,} validation tokens; on the "
          f"last {r['holdout_tokens']:,}: {r['val_before']:.4f} -> {r['val_after']:.4f} nats/token\n"
          f"wrote {r['adapter']}" + ("" if r["finished"] else " (the adapter of the steps done)"))
    if stop.requested and not r["finished"]:
        return interrupted(args, r["step"], r["total_steps"], "finetune")
    if not r["finished"]:
        _err(f"stopped early at step {r['step']}/{r['total_steps']}: continue with `{again(args, 'finetune', '--resume')}`")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from capstone.export import export_workspace

    r = export_workspace(Workspace(args.workspace), log=_err)
    print(f"exported (dynamic batch and sequence) in {r['export_seconds']:.1f}s: {r['bytes']:,} bytes\n"
          f"reloaded program vs eager on shapes {r['checked_shapes']}: max |diff| {r['max_abs_diff_vs_eager']:.2e}\n"
          f"wrote {r['path']}")
    return 0


def cmd_quantize(args: argparse.Namespace) -> int:
    from capstone.quantize import quantize_workspace

    r = quantize_workspace(Workspace(args.workspace), config_from(args, EvalConfig), log=_err)
    print(f"int8 dynamic quantization of the {r['scope']}\n"
          f"size (torch.save of the state_dict): {r['fp32_bytes']:,} -> {r['int8_bytes']:,} bytes = "
          f"{r['ratio']:.2f}x smaller\n"
          f"validation: fp32 {r['val_nats_fp32']:.4f}, int8 {r['val_nats_int8']:.4f} nats/token "
          f"({r['val_nats_difference']:+.4f})\n"
          f"wrote {r['path']}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from capstone.serve import serve_workspace

    return serve_workspace(Workspace(args.workspace), args.source, args.port, args.terminal, args.prompt,
                           config_from(args, SamplingConfig), log=_err)


# --------------------------------------------------------------------------- the parser


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Build a small GPT end to end: corpus -> tokenize -> train -> eval -> sample.")
    sub = parser.add_subparsers(
        dest="command", metavar="{corpus,tokenize,train,eval,sample,finetune,export,quantize,serve}", required=True)

    def stage(name: str, help: str, handler) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument("--workspace", default=DEFAULT_WORKSPACE, metavar="DIR",
                       help=f"where every artifact goes (default: ./{DEFAULT_WORKSPACE})")
        p.add_argument("--package", choices=PACKAGES, default="reference",
                       help="whose code runs: this package (reference, the default) or yours, assembled from "
                            "the stage labs in your tutor workspace and run in the sandbox (mine)")
        add_hidden_options(p)
        p.set_defaults(handler=handler, command_name=name)
        return p

    p = stage("corpus", "extract the corpus and split it into train/validation (module 30)", cmd_corpus)
    p.add_argument("--corpus", metavar="PATH", help="a UTF-8 text file (default: Python's bundled "
                   "language reference, pydoc_data.topics)")
    p.add_argument("--val-fraction", type=float, default=VAL_FRACTION, metavar="X",
                   help=f"tail share held out (default {VAL_FRACTION})")

    p = stage("tokenize", "train the byte-level BPE and write token files (modules 30-31)", cmd_tokenize)
    p.add_argument("--vocab-size", type=int, default=GPTConfig.vocab_size, metavar="N",
                   help=f"256 bytes + merges (default {GPTConfig.vocab_size})")
    p.add_argument("--compare-hf", action="store_true",
                   help="also compare compression with HuggingFace tokenizers, if installed")

    p = stage("train", "pretrain the GPT on CPU, with resumable checkpoints (modules 32-33)", cmd_train)
    add_options(p.add_argument_group("model (defaults: the course's 875,264-parameter GPT)"),
                GPTConfig, MODEL_OPTIONS, defaults={"dropout": RECIPE_DROPOUT}, unset=True)
    add_options(p.add_argument_group("training"), TrainConfig, TRAIN_OPTIONS, unset=True)
    stop = p.add_argument_group("stopping and resuming")
    stop.add_argument("--time-budget", type=float, metavar="SECONDS",
                      help="stop after this much training time (a checkpoint is written; --resume continues)")
    stop.add_argument("--stop-after", type=int, metavar="N",
                      help="stop after N more steps without changing the schedule")
    stop.add_argument("--resume", action="store_true", help="continue the workspace's checkpoint exactly")
    stop.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")

    p = stage("eval", "validation nats/token, bits/byte and n-gram baselines (module 34)", cmd_eval)
    add_options(p, EvalConfig)

    p = stage("sample", "generate text from the checkpoint (module 35)", cmd_sample)
    p.add_argument("--prompt", default="\n", help="text to continue (default: a newline)")
    add_options(p, SamplingConfig)
    p.add_argument("--no-cache", action="store_true", help="recompute every step instead of the KV cache")

    p = stage("finetune", "LoRA fine-tune on the validation split's head, scored on its tail (module 36)",
              cmd_finetune)
    add_options(p, LoRAConfig, unset=True)
    stop = p.add_argument_group("stopping and resuming")
    stop.add_argument("--stop-after", type=int, metavar="N", help="stop after N more steps (a checkpoint is written)")
    stop.add_argument("--resume", action="store_true", help="continue the workspace's stopped fine-tune exactly")
    stop.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")

    stage("export", "torch.export the checkpoint with dynamic batch and sequence (module 38)", cmd_export)

    p = stage("quantize", "int8 dynamic quantization: size ratio and validation nats (module 38)", cmd_quantize)
    add_options(p, EvalConfig)

    p = stage("serve", "stream generated text over HTTP on 127.0.0.1 or to the terminal (module 38)", cmd_serve)
    p.add_argument("--source", choices=SOURCES, default="auto",
                   help="which model: the exported program or the int8 one (default: int8 if present)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port on 127.0.0.1, 0 = any free one (default 8000)")
    p.add_argument("--terminal", action="store_true", help="print one generation to stdout instead of serving")
    p.add_argument("--prompt", default="\n", help="--terminal: text to continue (default: a newline)")
    add_options(p.add_argument_group("--terminal: sampling (HTTP requests pass these as query parameters)"),
                SamplingConfig)
    return parser


def main(argv: list[str] | None = None, *, prog: str = "pytorch-tutor capstone", profile: str = "default") -> int:
    parser = build_parser(prog)
    argv = list(argv) if argv is not None else None
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2): return the status, don't exit
        return e.code if isinstance(e.code, int) else 2
    try:
        if args.package == "mine" and not args.progress_file:  # the learner's code: only ever in the sandbox
            from tutor.commands.capstone_mine import run_mine

            return run_mine(args, argv if argv is not None else sys.argv[1:], profile)
        return args.handler(args)
    except CapstoneError as e:
        _err(f"error: {e}")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
