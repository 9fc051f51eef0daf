"""Which nodes of a cluster take a router's work, and with which serve flags
(kernelvault.cluster.placement): GPU work never lands on a CPU node, CPU work runs
with --backend cpu everywhere. Pure functions: no Ray needed."""
import pytest

from kernelvault.cluster.placement import backend_flag, serve_args_for, serves_work, work_kind


def test_backend_flag_reads_both_spellings_and_defaults_to_auto():
    assert backend_flag(["--policy", "task"]) == "auto"
    assert backend_flag(["--backend", "cuda", "--no-timing"]) == "cuda"
    assert backend_flag(["--backend=hip"]) == "hip"
    assert backend_flag(["--backend"]) == "auto"          # a dangling flag: serve itself refuses it


def test_explicit_backends_decide_the_kind_whatever_the_cluster_holds():
    for has_gpu in (False, True):
        assert work_kind(["--backend", "cuda"], has_gpu) == "gpu"
        assert work_kind(["--backend=hip"], has_gpu) == "gpu"
        assert work_kind(["--backend", "cpu"], has_gpu) == "cpu"


def test_auto_is_gpu_work_when_the_cluster_has_a_gpu():
    assert work_kind([], True) == "gpu"
    assert work_kind(["--backend", "auto"], False) == "cpu"


def test_gpu_work_goes_only_to_nodes_with_gpus():
    assert serves_work("gpu", 1) and serves_work("gpu", 8)
    assert not serves_work("gpu", 0)
    assert serves_work("cpu", 0) and serves_work("cpu", 8)


def test_cpu_work_runs_with_the_cpu_backend_on_every_node():
    assert serve_args_for(["--backend", "auto", "--no-timing"], "cpu") == ["--no-timing", "--backend", "cpu"]
    assert serve_args_for(["--backend=cpu", "--run", "r"], "cpu") == ["--run", "r", "--backend", "cpu"]
    assert serve_args_for(["--backend", "cuda", "--run", "r"], "gpu") == ["--backend", "cuda", "--run", "r"]


def test_eval_takes_kvault_evals_jobs_and_policies():
    from kernelvault.cluster.__main__ import _parser, _serve_args_of_eval
    base = ["eval", "--suite", "s", "--candidates", "c"]
    auto = _parser().parse_args(base + ["--jobs", "auto", "--policy", "fused"])
    assert "--lanes-per-device" not in _serve_args_of_eval(auto)
    assert _serve_args_of_eval(auto)[_serve_args_of_eval(auto).index("--policy") + 1] == "fused"
    three = _serve_args_of_eval(_parser().parse_args(base + ["--jobs", "3"]))
    assert three[three.index("--lanes-per-device") + 1] == "3"
    for bad in ("0", "257", "many"):
        with pytest.raises(SystemExit):
            _parser().parse_args(base + ["--jobs", bad])


def test_a_missing_suite_or_candidates_folder_is_misuse_before_ray(tmp_path, capsys):
    from kernelvault.cluster.__main__ import main
    (tmp_path / "suite").mkdir()
    for argv in (["eval", "--suite", str(tmp_path / "none"), "--candidates", str(tmp_path / "suite")],
                 ["eval", "--suite", str(tmp_path / "suite"), "--candidates", str(tmp_path / "none")],
                 ["gen", "--suite", str(tmp_path / "none")]):
        with pytest.raises(SystemExit) as exited:
            main(argv + ["--db", str(tmp_path / "c.db"), "--address", "127.0.0.1:1"])
        assert exited.value.code == 2 and "is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "c.db.campaigns").exists()
