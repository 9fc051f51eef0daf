"""The `build` object of the hello response: how to compile an extension that
this worker can load (include and library paths, libraries, ABI, suffix)."""
import inspect
import re
import sysconfig

import torch

CPU_LIBRARIES = ["c10", "torch", "torch_cpu", "torch_python"]


def torch_gpu_flavour():
    """"hip" for ROCm builds, "cuda" for CUDA builds, None for CPU-only builds."""
    if getattr(torch.version, "hip", None):
        return "hip"
    if torch.version.cuda:
        return "cuda"
    return None


def _paths(fn, gpu):
    """fn(cuda=...) on older PyTorch, fn(device_type=...) on newer; GPU paths
    fall back to the CPU ones when the toolkit (CUDA_HOME/ROCM_HOME) is missing."""
    if gpu:
        try:
            if "device_type" in inspect.signature(fn).parameters:
                return list(fn(device_type="cuda"))
            return list(fn(cuda=True))
        except (OSError, RuntimeError, TypeError):
            pass
    return list(fn())


def cxx_standard(cpp_extension):
    """The C++ standard PyTorch's own extension builds use ("c++17" for PyTorch 1.x
    and early 2.x, "c++20" for the releases whose headers require it): the newest
    -std=c++NN in torch.utils.cpp_extension, never below c++17."""
    try:
        source = inspect.getsource(cpp_extension)
    except (OSError, TypeError):
        source = ""
    years = [int(y) for y in re.findall(r"-std=c\+\+(\d\d)\b", source)]
    return "c++%d" % max([17] + [y for y in years if y < 90])


def build_info():
    from torch.utils import cpp_extension  # slow import: only when hello asks

    flavour = torch_gpu_flavour()
    libraries = list(CPU_LIBRARIES)
    if flavour == "cuda":
        libraries += ["c10_cuda", "torch_cuda"]
    elif flavour == "hip":
        libraries += ["c10_hip", "torch_hip"]
    home = None
    if flavour == "cuda":
        home = getattr(cpp_extension, "CUDA_HOME", None)
    elif flavour == "hip":
        home = getattr(cpp_extension, "ROCM_HOME", None)
    return {"include_paths": _paths(cpp_extension.include_paths, flavour is not None),
            "library_paths": _paths(cpp_extension.library_paths, flavour is not None),
            "libraries": libraries,
            "cxx11_abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
            "cxx_standard": cxx_standard(cpp_extension),
            "python_include": sysconfig.get_paths()["include"],
            "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
            "gpu_flavour": flavour,
            "toolkit_home": home}
