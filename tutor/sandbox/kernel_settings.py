"""Which CPU kernels and how many intra-op threads the sandbox's torch uses.

A drill must hold on any machine, so ``pytorch-tutor check`` can run the course under
settings other than this machine's own (``--setting default/1``): ATen's CPU capability
(the vectorised kernel set its dispatch picks: ``default``, ``avx2``, ``avx512``) and the
intra-op thread count. Both change floating-point results (another kernel, another
reduction order), which is how a claim decided by a small difference shows itself.

The capability reaches torch through ``ATEN_CPU_CAPABILITY`` in the zygote's environment,
read once when torch loads. ATen does not check it against the CPU (a kernel set the CPU
lacks dies of SIGILL), so a setting above what this CPU has is refused here, from the
flags in ``/proc/cpuinfo`` that ATen's own choice reads (through cpuinfo).
"""

from __future__ import annotations

from dataclasses import dataclass

CAPABILITIES = ("default", "avx2", "avx512")  # ordered: each needs what the one before it needs
MACHINE = "machine"  # this machine's own choice, as a plain interpreter would make it
MAX_THREADS = 64

# What ATen's CPU dispatch needs before it picks a kernel set (aten/src/ATen/native/DispatchStub.cpp).
_NEEDS = {
    "default": frozenset(),
    "avx2": frozenset({"avx2", "fma"}),
    "avx512": frozenset({"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"}),
}


class SettingError(ValueError):
    pass


@dataclass(frozen=True)
class KernelSettings:
    """One setting: a capability (None: the machine's own) and a thread count (None: torch's default)."""

    capability: str | None = None
    threads: int | None = None

    @classmethod
    def parse(cls, text: str) -> KernelSettings:
        """``default/1``, ``avx2``, ``machine/4``, ``machine``: CAPABILITY[/THREADS]."""
        cap, _, threads = text.strip().partition("/")
        cap = cap.strip().lower() or MACHINE
        if cap not in (*CAPABILITIES, MACHINE):
            raise SettingError(f"setting {text!r}: the capability is one of {', '.join((MACHINE, *CAPABILITIES))}")
        count = None
        if threads.strip():
            if not threads.strip().isdigit() or not 1 <= int(threads) <= MAX_THREADS:
                raise SettingError(f"setting {text!r}: the thread count is a whole number from 1 to {MAX_THREADS}")
            count = int(threads)
        return cls(None if cap == MACHINE else cap, count)

    @property
    def label(self) -> str:
        return f"{self.capability or MACHINE}/{self.threads}" if self.threads else (self.capability or MACHINE)

    def describe(self) -> str:
        cap = f"ATEN_CPU_CAPABILITY={self.capability}" if self.capability else "this machine's CPU kernels"
        threads = f"{self.threads} intra-op thread{'s' * (self.threads != 1)}" if self.threads else "torch's default threads"
        return f"{cap}, {threads}"

    def environment(self) -> dict[str, str]:
        return {"ATEN_CPU_CAPABILITY": self.capability} if self.capability else {}

    def problem(self, flags: frozenset[str] | None = None) -> str:
        """Why this CPU cannot run the setting ("" when it can)."""
        if self.capability is None:
            return ""
        flags = cpu_flags() if flags is None else flags
        missing = _NEEDS[self.capability] - flags
        if missing:
            return (f"this CPU lacks {', '.join(sorted(missing))}, which ATEN_CPU_CAPABILITY={self.capability} needs "
                    f"(it can run: {', '.join(available(flags))})")
        return ""


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux reports them (empty where /proc/cpuinfo says none)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def available(flags: frozenset[str] | None = None) -> list[str]:
    """The capabilities this CPU can run, weakest first."""
    flags = cpu_flags() if flags is None else flags
    return [cap for cap in CAPABILITIES if _NEEDS[cap] <= flags]
