"""Run by CMake (cmake/kvault_dependencies.cmake) under KVAULT_PYTHON: can this Python
build and load candidates? It needs PyTorch, PyTorch's extension headers, Python's own
headers and pybind11's headers, in the folders the engine compiles with (PyTorch's include
paths, Python's include folder, the compiler's default folders). Prints one summary line
and exits 0, or prints what to install and exits 1."""
import os
import sys
import sysconfig

DEFAULT_INCLUDES = ["/usr/include", "/usr/local/include"]


def find_header(header, folders):
    return next((d for d in folders if os.path.isfile(os.path.join(d, header))), None)


def main():
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError as e:
        return f"PyTorch does not import ({e}): {sys.executable} -m pip install torch"
    torch_includes = list(cpp_extension.include_paths())
    python_include = sysconfig.get_paths()["include"]
    if not find_header("torch/extension.h", torch_includes):
        return (f"PyTorch {torch.__version__} has no extension headers in {torch_includes}: "
                "install a PyTorch build with headers (PyPI's torch, or Debian's libtorch-dev)")
    if not find_header("Python.h", [python_include]):
        return (f"Python's headers are missing in {python_include}: install them "
                "(Debian/Ubuntu: python3-dev; Fedora: python3-devel)")
    pybind11 = find_header("pybind11/pybind11.h",
                           torch_includes + [python_include] + DEFAULT_INCLUDES)
    if not pybind11:
        return ("pybind11's headers are in none of PyTorch's include folders, Python's or "
                "/usr/include: install them (Debian/Ubuntu: pybind11-dev; Fedora: "
                "pybind11-devel), or use PyPI's torch, which ships them")
    print(f"{sys.executable}: torch {torch.__version__}, pybind11 headers in {pybind11}")
    return None


if __name__ == "__main__":
    error = main()
    if error:
        print(error)
        sys.exit(1)
