"""python -m kernelvault.cluster eval|gen|serve|status|stop (docs/cluster.md).

  eval   `kvault eval`'s flags plus --address: the candidates verified over the cluster
  gen    `kvault gen`'s flags plus --address: one `kvault gen` per task on the nodes
  serve  the HTTP front (`kvault serve`'s protocols) for trainers; flags after the
         front's own go to every node's `kvault serve`
  status the router's view of the nodes;  stop: end every node service
"""
import argparse
import json
import os
import signal
import sys
import threading

EVAL_VALUE_FLAGS = ("--arch", "--run-timeout", "--load-timeout", "--compile-timeout", "--compile-jobs")


def _common(parser):
    parser.add_argument("--address", default="auto", help="Ray cluster address (Default: auto)")
    parser.add_argument("--db", default=os.environ.get("KVAULT_DB") or "kvault.db", help="the driver's store")
    parser.add_argument("--resource", help="only nodes offering this Ray custom resource get a service")
    parser.add_argument("--node-folder", help="folder on every node for its store and log (Default: temp)")


def _jobs(value):
    """`--jobs` as `kvault eval` takes it: 1 to 256, or auto (None: serve's own default)."""
    if value == "auto":
        return None
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= 256:
        raise argparse.ArgumentTypeError("must be a number from 1 to 256, or auto, got %r" % value)
    return jobs


def _parser():
    parser = argparse.ArgumentParser(prog="python -m kernelvault.cluster", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="verify a folder of candidates against a suite over the cluster")
    _common(ev)
    ev.add_argument("--suite", required=True)
    ev.add_argument("--candidates", required=True)
    ev.add_argument("--tasks", help="comma-separated wildcards of the tasks whose candidates to verify, as kvault eval's")
    ev.add_argument("--run", default="default")
    ev.add_argument("--jobs", type=_jobs, help="lanes per device of every node's serve, or auto (Default: serve's)")
    ev.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda", "hip"])
    ev.add_argument("--reward", default="paper", choices=["paper", "hip-rl"])
    ev.add_argument("--policy", default="task", choices=["any", "fused", "custom_kernel", "task"])
    ev.add_argument("--no-timing", action="store_true")
    ev.add_argument("--json", action="store_true")
    for flag in EVAL_VALUE_FLAGS:
        ev.add_argument(flag)
    gen = sub.add_parser("gen", help="generate kernels for a suite over the cluster (other flags: kvault gen's)")
    _common(gen)
    gen.add_argument("--suite", required=True)
    gen.add_argument("--run", default="default")
    gen.add_argument("--max-tasks", type=int)
    gen.add_argument("--tasks", help="comma-separated wildcards of the tasks to generate for, as kvault gen's")
    sv = sub.add_parser("serve", help="the HTTP front for trainers (other flags: kvault serve's, for every node)")
    _common(sv)
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8470)
    sv.add_argument("--token-file", default=os.environ.get("KVAULT_SERVE_TOKEN_FILE"))
    for name in ("status", "stop"):
        _common(sub.add_parser(name))
    return parser


def _serve_args_of_eval(args):
    flags = ["--backend", args.backend, "--reward", args.reward, "--policy", args.policy, "--run", args.run]
    if args.no_timing:
        flags.append("--no-timing")
    if args.jobs:
        flags += ["--lanes-per-device", str(args.jobs)]
    for flag in EVAL_VALUE_FLAGS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            flags += [flag, value]
    return flags


def _router(args, serve_args):
    from .placement import start_router
    return start_router(os.path.abspath(args.db), serve_args, resource=args.resource, node_folder=args.node_folder)


def _wait_for_nodes(router):
    """front.wait_for_nodes; a cluster whose nodes cannot serve ends the command with why."""
    from ..errors import InfrastructureError
    from .front import wait_for_nodes
    try:
        wait_for_nodes(router)
    except (InfrastructureError, TimeoutError) as e:
        raise SystemExit("kernelvault.cluster: %s" % e) from None


def _check_folders(parser, args):
    """Misuse (exit 2) for a --suite or --candidates that is not a folder, as `kvault
    eval` says, before anything is started or a campaign's journal is written."""
    for flag in ("suite", "candidates"):
        folder = getattr(args, flag, None)
        if folder is not None and not os.path.isdir(folder):
            parser.error("--%s %s is not a folder" % (flag, folder))


def _ray_token_hint():
    """Why an existing cluster may have refused us: since Ray 2.5x, `ray start` turns
    token authentication on when a token exists on its host (~/.ray/auth_token, made by
    any earlier local `ray.init()`), and `ray.init` with an explicit address sends no
    token unless RAY_AUTH_MODE=token. "" when the mode is set or no token is found."""
    if os.environ.get("RAY_AUTH_MODE"):
        return ""
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    if not os.environ.get("RAY_AUTH_TOKEN") and not os.path.isfile(path):
        return ""
    return ("; if a cluster runs there, it may want Ray's token authentication (`ray start` turns it on "
            "where a token exists, as %s here): set RAY_AUTH_MODE=token, with that cluster's token in "
            "%s or RAY_AUTH_TOKEN, and run again"
            % ("RAY_AUTH_TOKEN" if os.environ.get("RAY_AUTH_TOKEN") else path, path))


def main(argv=None):
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("gen", "serve"):
        parser.error("unknown flags: %s" % " ".join(extra))
    _check_folders(parser, args)
    # A campaign's units are kvault's (`kvault eval --list`, `kvault gen --list`), and so
    # is its misuse, said before Ray starts: a wildcard that matches no task, a folder of
    # candidates none of which is a sample of a task of the suite.
    units = None
    if args.command in ("eval", "gen"):
        from .campaign import eval_units, gen_units
        units = (eval_units if args.command == "eval" else gen_units)(args)
    import ray
    if not ray.is_initialized():
        try:
            ray.init(address=args.address, namespace="kernelvault-driver", log_to_driver=False)
        except ConnectionError as e:
            raise SystemExit("kernelvault.cluster: no Ray cluster answered at --address %s: %s (start one with "
                             "`ray start --head`, docs/cluster.md)%s" % (args.address, e, _ray_token_hint())) from None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupted)  # Ray's own handler prints a stack trace and dies
    try:
        return _run(args, extra, units)
    except KeyboardInterrupt:
        if args.command == "serve":
            print("kernelvault.cluster: the front stopped; node services keep running (`stop` ends them)",
                  file=sys.stderr)
            return 0
        print("kernelvault.cluster: interrupted; what was recorded stays, run the same command again to continue",
              file=sys.stderr)
        return 130


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def _run(args, extra, units):
    """The command, once Ray is connected; `units`: a campaign's (eval_units, gen_units)."""
    import ray
    out = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    from . import campaign, front, placement
    if args.command == "stop":
        print("%d node service(s) stopped" % placement.stop_node_services())
        return 0
    if args.command == "status":
        routers = placement.running_routers()
        if not routers:
            print("no router runs (a campaign or `serve` starts one)")
            return 1
        for router in routers:
            print(json.dumps(ray.get(router.stats.remote()), indent=1))
        return 0
    if args.command == "eval":
        counts = campaign.run_eval(_router(args, _serve_args_of_eval(args)), args, out, units)
    elif args.command == "gen":
        router = _router(args, ["--no-timing"])  # nodes' services only place the gen runs
        _wait_for_nodes(router)
        counts = campaign.run_gen(router, args, extra, out, units)
    else:
        token = open(args.token_file).read().strip() if args.token_file else os.environ.get("KVAULT_SERVE_TOKEN")
        router = _router(args, extra)
        _wait_for_nodes(router)
        front.serve_front(router, args.host, args.port, token,
                          ready=lambda url: print(json.dumps({"listening": url}), flush=True))
        return 0
    print(json.dumps(dict(counts)) if getattr(args, "json", False) else
          "  ".join("%s %d" % item for item in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
