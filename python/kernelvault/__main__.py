"""python -m kernelvault health | metrics | verify --task T (--code F | --completion F)

Prints the server's JSON (metrics: its text). Exit 0; 1 when the server cannot be
reached or refuses (the message on stderr; health and metrics try once, verify rides
out a restart of the server); 2 for a task error, or a file that
cannot be read as UTF-8 text (misuse, said before anything is sent).
"""
import argparse
import json
import os
import sys

from .client import Client
from .errors import KernelVaultError, TaskError


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kernelvault", description="client of kvault serve")
    parser.add_argument("--url", default=None, help="the server (default $KVAULT_URL, else http://127.0.0.1:8470)")
    parser.add_argument("--token", default=None, help="bearer token (default $KVAULT_TOKEN)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("health", help="GET /v1/health")
    commands.add_parser("metrics", help="GET /metrics")
    verify = commands.add_parser("verify", help="POST /v1/verify one candidate")
    verify.add_argument("--task", required=True, help="the task file (PyTorch reference)")
    source = verify.add_mutually_exclusive_group(required=True)
    source.add_argument("--code", help="the candidate's source file")
    source.add_argument("--completion", help="a file holding an LLM's whole answer")
    verify.add_argument("--language", help="hip, cuda, cpp, python or triton (default: detected)")
    verify.add_argument("--reward", choices=("paper", "hip-rl"))
    args = parser.parse_args(argv)

    request = {}
    if args.command == "verify":
        try:
            request["task_source"] = _read(args.task)
            request["task_name"] = os.path.splitext(os.path.basename(args.task))[0]  # as eval names it
            request["code" if args.code else "completion"] = _read(args.code or args.completion)
        except (OSError, UnicodeDecodeError) as e:
            parser.error("cannot read a file as UTF-8 text: %s" % e)
    # A probe answers at once whether the server is there; a verification rides out a
    # restart of the server, as the trainer adapters do.
    client = Client(args.url, args.token, retries=0) if args.command in ("health", "metrics") \
        else Client(args.url, args.token)
    try:
        if args.command == "health":
            print(json.dumps(client.health(), indent=2))
        elif args.command == "metrics":
            sys.stdout.write(client.metrics())
        else:
            for field in ("language", "reward"):
                if getattr(args, field):
                    request[field] = getattr(args, field)
            print(json.dumps(client.verify(request), indent=2))
    except TaskError as e:
        print("kernelvault: task error: %s" % e, file=sys.stderr)
        return 2
    except KernelVaultError as e:
        print("kernelvault: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
