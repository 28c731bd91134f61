"""vramfit from Python: will this model fit on these GPUs under this engine, stage by stage.

Each function runs the vramfit command (found through binary=, $VRAMFIT_BIN or PATH) with
--json and returns a typed result (vramfit.results); a refused input raises VramfitError
with the command's message and exit code. Engine flags are keyword arguments in the engine's
own spelling, dashes as underscores: plan("qwen3-8b", gpu="rtx-4090", max_model_len=32768).

    import vramfit
    p = vramfit.plan("qwen3-8b", gpu="rtx-4090", max_model_len=32768)
    print(p.fits, p.failure_stage, p.kv_cache_tokens)
"""

from __future__ import annotations

import os
import shlex
from typing import Any, List, Optional, Sequence, Union

from vramfit._run import VramfitError, find_binary, flags, run
from vramfit.results import (Advice, Audit, Diagnosis, Finding, Fit, FitOption, Fix, GpuPlan,
                             Inventory, Plan, Quantization)

__all__ = [
    "plan", "plan_text", "check", "fit", "inspect", "doctor", "assert_fits", "NotFitting",
    "VramfitError", "find_binary", "Plan", "GpuPlan", "Advice", "Inventory", "Quantization",
    "Audit", "Finding", "Fit", "FitOption", "Diagnosis", "Fix",
]

__version__ = "0.1.0"

PathLike = Union[str, "os.PathLike[str]"]


def _what_if(as_quantized: Optional[str], bits: Optional[int], group_size: Optional[int],
             desc_act: bool) -> List[str]:
    return flags({"as_quantized": as_quantized, "bits": bits, "group_size": group_size,
                  "desc_act": desc_act})


def _plan_argv(model: str, gpu: Optional[str], gpu_memory: Optional[str], engine: Optional[str],
               as_quantized: Optional[str], bits: Optional[int], group_size: Optional[int],
               desc_act: bool, engine_flags: dict) -> List[str]:
    return (["plan", str(model)] + flags({"gpu": gpu, "gpu_memory": gpu_memory,
                                          "engine": engine})
            + _what_if(as_quantized, bits, group_size, desc_act) + flags(engine_flags))


def plan(model: PathLike, gpu: Optional[str] = None, *, gpu_memory: Optional[str] = None,
         engine: Optional[str] = None, as_quantized: Optional[str] = None,
         bits: Optional[int] = None, group_size: Optional[int] = None, desc_act: bool = False,
         binary: Optional[str] = None, **engine_flags: Any) -> Plan:
    """`vramfit plan MODEL --gpu GPU ...`: the engine's start-up stage by stage.

    Example: plan("qwen3-30b-a3b", gpu="a100-80gb", as_quantized="awq").fits
    """
    argv = _plan_argv(str(model), gpu, gpu_memory, engine, as_quantized, bits, group_size,
                      desc_act, engine_flags)
    data, _ = run(argv + ["--json"], binary)
    return Plan.from_json(data)


def plan_text(model: PathLike, gpu: Optional[str] = None, *, gpu_memory: Optional[str] = None,
              engine: Optional[str] = None, as_quantized: Optional[str] = None,
              bits: Optional[int] = None, group_size: Optional[int] = None,
              desc_act: bool = False, binary: Optional[str] = None,
              **engine_flags: Any) -> str:
    """The plan as the command prints it: the stage table, the verdict and what fits."""
    argv = _plan_argv(str(model), gpu, gpu_memory, engine, as_quantized, bits, group_size,
                      desc_act, engine_flags)
    text, _ = run(argv, binary, want_json=False)
    return text


def _check_argv(command: Union[str, Sequence[str]], gpu: Optional[str],
                gpu_memory: Optional[str], engine: Optional[str], json: bool) -> List[str]:
    words = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]
    return (["check"] + flags({"gpu": gpu, "gpu_memory": gpu_memory, "engine": engine,
                               "json": json}) + ["--"] + words)


def check(command: Union[str, Sequence[str]], gpu: Optional[str] = None, *,
          gpu_memory: Optional[str] = None, engine: Optional[str] = None,
          binary: Optional[str] = None) -> Plan:
    """`vramfit check --gpu GPU -- COMMAND`: the plan of a real engine command line (a string
    is split as a shell would). A command that will not fit is a Plan with fits False, not an
    error.

    Example: check("vllm serve Qwen/Qwen3-8B --max-model-len 32768", gpu="rtx-4090").fits
    """
    data, _ = run(_check_argv(command, gpu, gpu_memory, engine, True), binary, ok_codes=(0, 1))
    return Plan.from_json(data)


def fit(model: PathLike, gpu: Optional[str] = None, *, goal: Optional[str] = None,
        gpus: Optional[int] = None, min_context: Optional[Union[int, str]] = None,
        min_concurrency: Optional[float] = None, gpu_memory: Optional[str] = None,
        engine: Optional[str] = None, no_eager: bool = False, no_variants: bool = False,
        as_quantized: Optional[str] = None, bits: Optional[int] = None,
        group_size: Optional[int] = None, desc_act: bool = False,
        binary: Optional[str] = None, **engine_flags: Any) -> Fit:
    """`vramfit fit MODEL --gpu GPU [--goal context|concurrency|gpus]`: the settings that fit.
    A goal that cannot be met is a Fit with met False (and `unmet`), not an error."""
    argv = (["fit", str(model)]
            + flags({"gpu": gpu, "gpu_memory": gpu_memory, "engine": engine, "goal": goal,
                     "gpus": gpus, "min_context": min_context,
                     "min_concurrency": min_concurrency, "no_eager": no_eager,
                     "no_variants": no_variants})
            + _what_if(as_quantized, bits, group_size, desc_act) + flags(engine_flags))
    data, _ = run(argv + ["--json"], binary, ok_codes=(0, 1))
    return Fit.from_json(data)


def inspect(model: PathLike, *, tensors: bool = False, synthesize: bool = False,
            as_quantized: Optional[str] = None, bits: Optional[int] = None,
            group_size: Optional[int] = None, desc_act: bool = False,
            binary: Optional[str] = None) -> Inventory:
    """`vramfit inspect MODEL`: parameters, bytes by dtype and component, quantization, audit.

    Example: inspect("qwen3-8b", as_quantized="gptq", bits=3).total_bytes
    """
    argv = (["inspect", str(model)] + flags({"tensors": tensors, "synthesize": synthesize})
            + _what_if(as_quantized, bits, group_size, desc_act))
    data, _ = run(argv + ["--json"], binary)
    return Inventory.from_json(data)


def doctor(log: Optional[PathLike] = None, *, text: Optional[str] = None,
           model: Optional[str] = None, gpu: Optional[str] = None,
           binary: Optional[str] = None, **engine_flags: Any) -> Diagnosis:
    """`vramfit doctor LOG`: the stage, cause and fixes of an out-of-memory log, given as a
    file path or as `text`. A log with nothing recognised raises VramfitError (exit code 2)."""
    if (log is None) == (text is None):
        raise VramfitError("doctor: give a log file path or text=, one of them", 2)
    argv = (["doctor", "-" if log is None else os.fspath(log)]
            + flags({"model": model, "gpu": gpu}) + flags(engine_flags))
    data, _ = run(argv + ["--json"], binary, stdin=text)
    return Diagnosis.from_json(data)


class NotFitting(AssertionError):
    """assert_fits's failure: the message is the plan's stage table and verdict."""

    def __init__(self, message: str, plan: Plan):
        super().__init__(message)
        self.plan = plan


def assert_fits(model: Optional[PathLike] = None, gpu: Optional[str] = None, *,
                command: Optional[Union[str, Sequence[str]]] = None,
                gpu_memory: Optional[str] = None, engine: Optional[str] = None,
                binary: Optional[str] = None, **options: Any) -> Plan:
    """Fails (NotFitting, an AssertionError) unless the model fits: MODEL with engine flags as
    keyword arguments, or a real deploy `command` line as `check` reads it. The failure
    message is the plan's stage table, so a test report shows where it runs out of memory.

    Example: assert_fits("qwen3-8b", gpu="rtx-4090", max_model_len=32768)
    """
    if (model is None) == (command is None):
        raise VramfitError("assert_fits: give a model or a command=, one of them", 2)
    if command is not None:
        if options:
            raise VramfitError("assert_fits: engine flags go inside command=", 2)
        data, _ = run(_check_argv(command, gpu, gpu_memory, engine, True), binary,
                      ok_codes=(0, 1))
        result = Plan.from_json(data)
        if not result.fits:
            text, _ = run(_check_argv(command, gpu, gpu_memory, engine, False), binary,
                          ok_codes=(0, 1), want_json=False)
            raise NotFitting(text, result)
        return result
    result = plan(model, gpu, gpu_memory=gpu_memory, engine=engine, binary=binary, **options)
    if not result.fits:
        raise NotFitting(
            plan_text(model, gpu, gpu_memory=gpu_memory, engine=engine, binary=binary,
                      **options), result)
    return result
