"""Clocks and temperature of the device, read through NVML when pynvml (the
nvidia-ml-py package) imports; None otherwise, and then the engine asks
nvidia-smi / rocm-smi itself once (docs/timing.md, "Clocks"). Read at the start
and end of a timed case, never per sample."""
_nvml = None


def _load_nvml():
    global _nvml
    if _nvml is None:
        try:
            import pynvml
            pynvml.nvmlInit()
            _nvml = pynvml
        except Exception:  # not installed, no driver, not an NVIDIA device
            _nvml = False
    return _nvml or None


def read_sensors(device):
    """{"source": "nvml", "sm_mhz", "mem_mhz", "temperature_c"} or None."""
    if not device.is_gpu or device.backend != "cuda":
        return None
    nvml = _load_nvml()
    if nvml is None:
        return None
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(_physical_index(device.index))
        return {"source": "nvml",
                "sm_mhz": int(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
                "mem_mhz": int(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM)),
                "temperature_c": int(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))}
    except Exception:
        return None


def _physical_index(index):
    """NVML numbers devices ignoring CUDA_VISIBLE_DEVICES; map a plain numeric list."""
    import os
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    parts = [p.strip() for p in visible.split(",") if p.strip()]
    if parts and all(p.isdigit() for p in parts) and index < len(parts):
        return int(parts[index])
    return index
