"""Campaigns: `kvault eval` and `kvault gen` spread over the cluster, resumable after
their driver dies (docs/cluster.md, "Campaigns").

Work is data. A campaign's folder, `<db>.campaigns/<run>/`, holds `units.json` (the
unit list, written once: for eval one candidate file each, with the idempotency key
it is always sent with; for gen one task each) and `done.jsonl` (one line per unit
whose result is in the driver's store, appended after the import). Started again with
the same flags, a campaign sends only the units not in done.jsonl; a unit done but
not yet marked is sent again with its key and lands on its own store row (the store's
key), so a killed driver loses nothing and records nothing twice. A unit the cluster
could not verify (an infra_error: no row in the store) is not marked, so it is sent
again too; the campaign then ends with an error saying why, as it does at once when
no node of the cluster can take its work (a node whose service cannot start).

An eval unit's request names its sample as `kvault eval` does (the candidate file's
name), so byte-identical files are two samples and two rows, and `kvault score` counts
the campaign's run exactly as it counts a single-host eval of the same folder.
"""
import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

from ..client import problem_of
from .paths import kvault_binary, kvault_env
from .recorder import Recorder

CHUNK = 512          # units submitted to the router at once
POLL_S = 2.0


class Journal:
    """The campaign's folder: its unit list and which units are done."""

    def __init__(self, db, run, kind):
        self.folder = Path(str(db) + ".campaigns") / run
        self.units_path, self.done_path = self.folder / "units.json", self.folder / "done.jsonl"
        self.kind = kind

    def units(self, make):
        """The unit list: read back, or made by make() and written (atomically) once."""
        if self.units_path.exists():
            saved = json.loads(self.units_path.read_text())
            if saved["kind"] != self.kind:
                raise SystemExit("%s holds a %s campaign, not %s" % (self.units_path, saved["kind"], self.kind))
            return saved["units"]
        units = make()
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.units_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"kind": self.kind, "units": units}))
        os.replace(tmp, self.units_path)
        return units

    def done(self):
        """{unit id: status} of the units recorded so far."""
        if not self.done_path.exists():
            return {}
        done = {}
        for line in self.done_path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # the last line of a killed driver may be cut short
            done[entry["unit"]] = entry["status"]
        return done

    def mark(self, unit, status):
        with open(self.done_path, "a") as f:
            f.write(json.dumps({"unit": unit, "status": status}) + "\n")


def eval_units(args):
    """The eval campaign's units, as `kvault eval --list --json` lists them (docs/cli.md):
    the engine matches the candidates of --candidates to the tasks of --suite (and
    --tasks), so a campaign verifies what `kvault eval` of the same folder would, in
    its order. One unit per candidate: its path below --candidates (the unit's id),
    task, task file, sample name and language, and the idempotency key it is always
    sent with. kvault's stderr (the files it skipped) passes through. Misuse as kvault
    says it (no candidate matches, a wildcard that matches no task): SystemExit(2)
    after kvault's message; no kvault or a listing that fails: SystemExit saying so."""
    command = [_kvault_or_exit(), "eval", "--suite=" + args.suite, "--candidates=" + args.candidates,
               "--backend=" + args.backend, "--list", "--json"]
    if getattr(args, "tasks", None):
        command.append("--tasks=" + args.tasks)
    units = _kvault_list(command, "units")
    folder = os.path.abspath(args.candidates)
    return [{"unit": os.path.relpath(u["candidate"], folder), "task": u["task"], "task_path": u["task_path"],
             "candidate": u["candidate"], "sample": u["sample"], "language": u["language"],
             "key": "kc-" + uuid.uuid4().hex} for u in units]


def gen_units(args):
    """The gen campaign's units, one per task, as `kvault gen --list --json` lists them
    (docs/cli.md): the engine finds the suite's tasks and names them (`level1/19_ReLU`
    in KernelBench's layout), and picks those of --tasks, then the first --max-tasks,
    so a campaign generates for what `kvault gen` of the same suite would, in its order.
    Each unit: the task's name (the unit's id) and its file. Misuse as kvault says it
    (a wildcard that matches no task): SystemExit(2) after kvault's message; no kvault
    or a listing that fails: SystemExit saying so."""
    command = [_kvault_or_exit(), "gen", "--suite=" + args.suite, "--list", "--json"]
    if getattr(args, "tasks", None):
        command.append("--tasks=" + args.tasks)
    if getattr(args, "max_tasks", None):
        command.append("--max-tasks=%d" % args.max_tasks)
    return [{"unit": t["task"], "task_path": t["task_path"]} for t in _kvault_list(command, "tasks")]


def _kvault_list(command, key):
    """The `key` list of the document a `kvault ... --list --json` command prints; its
    stderr passes through. SystemExit(2) on kvault's misuse (after its message), a
    SystemExit naming the command when it fails or prints no such list."""
    listed = subprocess.run(command, capture_output=True, text=True, env=kvault_env())
    sys.stderr.write(listed.stderr)
    if listed.returncode == 2:
        raise SystemExit(2)
    try:
        if listed.returncode != 0:
            raise ValueError("exit %d" % listed.returncode)
        items = json.loads(listed.stdout)[key]
        if not isinstance(items, list):
            raise TypeError("%s is not a list" % key)
        return items
    except (ValueError, KeyError, TypeError) as e:
        raise SystemExit("kernelvault.cluster: `%s` did not list the %s (%s): %s"
                         % (" ".join(command), key, e, listed.stdout[-300:])) from None


def _kvault_or_exit():
    """paths.kvault_binary() on the driver; SystemExit saying what was tried when none."""
    try:
        return kvault_binary()
    except FileNotFoundError as e:
        raise SystemExit("kernelvault.cluster: %s" % e) from None


def eval_request(unit, args):
    """The native API request of a unit, named as `kvault eval` names its sample (the
    candidate file's name): identical files are two samples, two rows, as in eval."""
    request = {"task_source": Path(unit["task_path"]).read_text(), "task_name": unit["task"],
               "code": Path(unit["candidate"]).read_text(), "idempotency_key": unit["key"],
               "sample": unit.get("sample") or Path(unit["candidate"]).name,
               "run": args.run, "policy": args.policy, "reward": args.reward}
    if unit.get("language"):  # kvault's (format detection; the extension's for a file it cannot load)
        request["language"] = unit["language"]
    return request


def _stop_if_unservable(router, args):
    """SystemExit naming the nodes and why, when no node can take the router's work."""
    import ray
    why = ray.get(router.unservable.remote())
    if why:
        raise SystemExit("campaign %s: %s" % (args.run, why))


def run_eval(router, args, out, listed):
    """The eval campaign: every unit not done goes to the router; each result is
    marked done once the router has recorded it. `listed`: eval_units(args), the
    units of a campaign not started before (a journal's own list is kept). ->
    {status: count}; SystemExit when units could not be verified (module doc)."""
    import ray
    journal = Journal(args.db, args.run, "eval")
    units = journal.units(lambda: listed)
    done = journal.done()
    todo = [u for u in units if u["unit"] not in done]
    out("campaign %s: %d unit(s), %d done before, %d to verify" % (args.run, len(units), len(done), len(todo)))
    active, position, recorded, shown = {}, 0, len(done), None   # active: call id -> (units, indexes answered)
    unverified = []                                                 # the infra_error messages
    while position < len(todo) or active:
        _stop_if_unservable(router, args)
        # Keep about CHUNK units at the router, so the nodes never wait for the driver.
        while position < len(todo) and sum(len(u) - len(m) for u, m in active.values()) < CHUNK:
            chunk = todo[position:position + CHUNK // 2]
            position += len(chunk)
            active[ray.get(router.submit.remote([eval_request(u, args) for u in chunk]))] = (chunk, set())
        for call, (chunk, answered) in list(active.items()):
            snapshot = ray.get(router.poll.remote(call, POLL_S / len(active)))
            for i, result in enumerate(snapshot["results"]):
                if result is not None and i not in answered:
                    answered.add(i)
                    if problem_of(result) == "infrastructure":
                        unverified.append(result.get("message") or "infra_error")
                        continue
                    journal.mark(chunk[i]["unit"], result.get("status", "infra_error"))
                    recorded += 1
            if len(answered) == len(chunk):
                ray.get(router.forget.remote(call))
                del active[call]
        if recorded != shown:
            out("  %d/%d" % (recorded, len(units)))
            shown = recorded
    if unverified:
        # Units answered infra_error because no node could start say so, not each unit.
        _stop_if_unservable(router, args)
        raise SystemExit("campaign %s: %d unit(s) not verified, sent again when the campaign is started again; "
                         "the first: %s" % (args.run, len(unverified), unverified[0]))
    return Counter(journal.done().values())


def run_gen(router, args, gen_flags, out, listed):
    """The gen campaign: one `kvault gen` per task on a node (its own lanes), the
    attempts it recorded imported into the driver's store. -> {"solved"/...: count}.
    The node's gen sees a suite of its one task, at its path below the suite (so its
    records carry the suite's name for it, `level1/19_ReLU`): --tasks and --max-tasks
    pick the units here (`listed`: gen_units(args), kept only for a campaign not
    started before), never on the node."""
    import ray
    journal = Journal(args.db, args.run, "gen")
    units = journal.units(lambda: listed)
    # A task whose `kvault gen` failed (an LLM call that failed, exit 3) is generated
    # again, with --resume where its node kept its store; a finished one is not.
    done = {unit: status for unit, status in journal.done().items() if status == "finished"}
    todo = [u for u in units if u["unit"] not in done]
    out("campaign %s: %d task(s), %d done before, %d to generate" % (args.run, len(units), len(done), len(todo)))
    running, recorder = {}, Recorder(str(Path(args.db).resolve()))
    while todo or running:
        _stop_if_unservable(router, args)
        nodes = ray.get(router.node_handles.remote())
        busy = {node_id for node_id, _ in running.values()}
        for node_id, handle in nodes.items():
            if todo and node_id not in busy:
                unit = todo.pop(0)
                future = handle.run_gen.remote(unit["unit"], Path(unit["task_path"]).read_text(), gen_flags, args.run)
                running[future] = (node_id, unit)
        if not running:
            time.sleep(POLL_S)
            continue
        ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
        for future in ready:
            _, unit = running.pop(future)
            try:
                code, rows, tail = ray.get(future)
            except Exception as e:  # noqa: BLE001 - the node was lost: the task runs again elsewhere
                out("  %s: node lost (%s), again" % (unit["unit"], str(e).strip().splitlines()[-1:]))
                todo.append(unit)
                continue
            failure = recorder.record(rows)
            if failure:
                raise SystemExit(failure)
            status = "finished" if code == 0 else "failed (exit %d): %s" % (code, tail.strip()[-300:])
            journal.mark(unit["unit"], "finished" if code == 0 else "failed")
            out("  %s: %s, %d attempt(s)" % (unit["unit"], status, len(rows)))
    recorder.close()
    return Counter(journal.done().values())
