"""The machine a fit runs on: memory available to this process (a cgroup limit included), cores, a GPU.

:func:`detect_machine` reads them once per plan (:func:`skframe.compute.plan.plan_fit`); tests
and benchmarks pass a made-up :class:`Machine` instead. The GPU is probed only when a plan
may use one, and CuPy is imported only then, and only when it is installed.

>>> m = Machine(memory_bytes=8 * 10**9, cores=2)
>>> m.gpu, m.to_dict()["memory_bytes"]
(False, 8000000000)
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from skframe.compute.memory import format_bytes
from skframe.core.threads import available_cores
from skframe.deps import available, disabled

__all__ = ["Machine", "available_memory", "detect_machine"]

_MEMINFO = "/proc/meminfo"
_CGROUP = "/sys/fs/cgroup"
_NO_LIMIT = 1 << 60  # cgroup v1 writes a huge number for "no limit"


@dataclass(frozen=True)
class Machine:
    """What the machine offers a fit.

    Parameters
    ----------
    memory_bytes : int
        Memory available to this process now: the system's available memory, lowered by a
        cgroup (container) limit when there is one.
    cores : int
        Cores this process may use (:func:`skframe.core.threads.available_cores`).
    gpu : bool
        A GPU usable through CuPy.
    gpu_free_bytes : int or None
        Free memory of that GPU.
    memory_source, gpu_source : str
        Where the figures come from (reported in the plan's reasons).
    """

    memory_bytes: int
    cores: int = 1
    gpu: bool = False
    gpu_free_bytes: int | None = None
    memory_source: str = "given"
    gpu_source: str = "not probed"

    def to_dict(self):
        return asdict(self)


def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if text == "max":
        return _NO_LIMIT
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None


def _meminfo_available(path=_MEMINFO):
    """``MemAvailable`` of ``/proc/meminfo`` in bytes, or None."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room(root=_CGROUP):
    """``(limit - usage, limit)`` of this process's memory cgroup (v2, then v1), or None without a limit."""
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        limit = _read_int(os.path.join(root, limit_file))
        if limit is None or limit >= _NO_LIMIT:
            continue
        usage = _read_int(os.path.join(root, usage_file)) or 0
        return max(0, limit - usage), limit
    return None


def available_memory(meminfo=_MEMINFO, cgroup=_CGROUP):
    """``(bytes, source)``: memory available to this process, and where the figure comes from.

    The smaller of ``MemAvailable`` (``/proc/meminfo``) and the room left under a cgroup
    limit (``/sys/fs/cgroup/memory.max`` less ``memory.current``, or their cgroup v1 names).
    Off Linux, the physical pages the system reports available; 4 GB when nothing is known.
    """
    avail = _meminfo_available(meminfo)
    source = f"MemAvailable {format_bytes(avail)}" if avail is not None else None
    room = _cgroup_room(cgroup)
    if room is not None and (avail is None or room[0] < avail):
        avail = room[0]
        source = f"cgroup limit {format_bytes(room[1])}, {format_bytes(room[0])} unused"
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            source = f"available physical pages {format_bytes(avail)}"
        except (ValueError, OSError, AttributeError):
            avail, source = 4 * 10**9, "unknown (4 GB assumed)"
    return int(avail), source


_GPU_PROBE = []


def _probe_gpu():
    """``(present, free_bytes, source)`` of the current CUDA device, imported only when CuPy is installed."""
    if _GPU_PROBE:
        return _GPU_PROBE[0]
    if disabled("cupy"):
        found = (False, None, "CuPy disabled by SKFRAME_DISABLE_CUPY")
    elif not available("cupy"):
        found = (False, None, "CuPy is not installed")
    else:
        try:
            import cupy  # lazy: the optional GPU library, imported only to probe a GPU when it is installed

            if int(cupy.cuda.runtime.getDeviceCount()) < 1:
                found = (False, None, "no GPU is visible to CuPy")
            else:
                free, total = cupy.cuda.Device().mem_info
                found = (True, int(free), f"GPU {format_bytes(free)} free of {format_bytes(total)}")
        except Exception as exc:  # driver or runtime missing: the CPU it is
            found = (False, None, f"the CUDA runtime cannot be used ({type(exc).__name__})")
    _GPU_PROBE.append(found)
    return found


def detect_machine(*, probe_gpu=False):
    """The :class:`Machine` this process runs on; the GPU is probed only when ``probe_gpu`` (CuPy is
    imported only then, and only when installed)."""
    memory, source = available_memory()
    gpu, free, gpu_source = _probe_gpu() if probe_gpu else (False, None, "not probed")
    return Machine(memory, available_cores(), gpu, free, source, gpu_source)
