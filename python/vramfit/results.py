"""Typed results mirroring the vramfit command's JSON contracts (docs/cli.md): one dataclass
per object, sizes in integer bytes as the JSON has them. Each result keeps the whole JSON
object in `raw`, so a key added later is still reachable."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Type, TypeVar

T = TypeVar("T")


def _pick(cls: Type[T], data: Optional[Dict[str, Any]], **nested: Any) -> T:
    """cls built from the JSON object's keys that are its fields (others are left to `raw`)."""
    data = data or {}
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names and k not in nested}
    kwargs.update(nested)
    if "raw" in names:
        kwargs["raw"] = data
    return cls(**kwargs)


@dataclass
class GpuPlan:
    """One GPU's figures in a plan (vramfit.plan/1 `gpus[]`)."""
    total_bytes: int = 0
    budget_bytes: int = 0
    cuda_context_bytes: int = 0
    weights_bytes: int = 0
    load_peak_bytes: int = 0
    activation_peak_bytes: int = 0
    non_torch_bytes: int = 0
    cudagraph_bytes: int = 0
    kv_cache_bytes: int = 0
    peak_bytes: int = 0
    device_used_bytes: int = 0
    explain: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Advice:
    """A change that makes the plan fit (`advice[]`), re-planned."""
    change: str = ""
    effect: str = ""
    cost: str = ""
    command: str = ""


@dataclass
class Plan:
    """vramfit.plan/1, which `check --json` prints too. `fits` is the verdict;
    `failure_stage` is None or startup | load | profile | kv_cache | cudagraph | warmup |
    runtime. `what_if` names a what-if quantization (plan(..., as_quantized="awq"))."""
    engine: str = ""
    modelled_version: str = ""
    fits: bool = False
    failure_stage: Optional[str] = None
    failure_message: str = ""
    gpu: Dict[str, Any] = field(default_factory=dict)
    gpus: List[GpuPlan] = field(default_factory=list)
    kv_cache_tokens: int = 0
    max_concurrency: float = 0.0
    max_model_len: int = 0
    estimated_max_model_len: int = 0
    kv_needed_bytes: int = 0
    kv_block_size: int = 0
    kv_groups: int = 0
    margin_bytes: int = 0
    uncertainty_bytes: int = 0
    confidence: str = ""
    settings: Dict[str, Any] = field(default_factory=dict)
    advice: List[Advice] = field(default_factory=list)
    command: str = ""
    notes: List[str] = field(default_factory=list)
    what_if: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Plan":
        return _pick(cls, data,
                     gpus=[_pick(GpuPlan, g) for g in data.get("gpus", [])],
                     advice=[_pick(Advice, a) for a in data.get("advice", [])])


@dataclass
class Quantization:
    method: str = "none"
    bits: int = 16
    group_size: int = 0
    format: str = ""
    effective_bits: float = 0.0


@dataclass
class Finding:
    severity: str = ""
    code: str = ""
    message: str = ""
    bytes: int = 0


@dataclass
class Audit:
    quantized_linear: int = 0
    unquantized_linear: int = 0
    quantized_linear_bytes: int = 0
    unquantized_linear_bytes: int = 0
    quant_metadata_bytes: int = 0
    findings: List[Finding] = field(default_factory=list)


@dataclass
class Inventory:
    """vramfit.inspect/1: what a checkpoint holds. `parameters` is the unquantized model's
    count; `what_if` names a what-if quantization (inspect(..., as_quantized="gptq"))."""
    model: str = ""
    origin: str = ""
    synthesized: bool = False
    what_if: Optional[str] = None
    spec: Optional[Dict[str, Any]] = None
    parameters: int = 0
    total_bytes: int = 0
    tensor_count: int = 0
    header_bytes: int = 0
    files: List[str] = field(default_factory=list)
    by_dtype: Dict[str, Any] = field(default_factory=dict)
    by_component: Dict[str, Any] = field(default_factory=dict)
    quantization: Quantization = field(default_factory=Quantization)
    audit: Audit = field(default_factory=Audit)
    notes: List[str] = field(default_factory=list)
    tensors: List[Dict[str, Any]] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Inventory":
        audit = data.get("audit") or {}
        return _pick(cls, data,
                     quantization=_pick(Quantization, data.get("quantization")),
                     audit=_pick(Audit, audit,
                                 findings=[_pick(Finding, f) for f in audit.get("findings", [])]))


@dataclass
class FitOption:
    """One row of a fit (`best`, `options[]`, `nearest`): settings that fit and their command."""
    model: str = ""
    gpu: Dict[str, Any] = field(default_factory=dict)
    gpus: int = 0
    max_model_len: int = 0
    max_concurrency: float = 0.0
    served_concurrency: float = 0.0
    kv_cache_tokens: int = 0
    kv_cache_bytes: int = 0
    given_up: List[str] = field(default_factory=list)
    settings: Dict[str, Any] = field(default_factory=dict)
    command: str = ""


@dataclass
class Fit:
    """vramfit.fit/1. `met` is False (and `unmet` says why) when the goal cannot be met."""
    goal: str = ""
    met: bool = False
    unmet: Optional[str] = None
    plans_evaluated: int = 0
    best: Optional[FitOption] = None
    options: List[FitOption] = field(default_factory=list)
    nearest: Optional[FitOption] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Fit":
        def option(o: Optional[Dict[str, Any]]) -> Optional[FitOption]:
            return None if o is None else _pick(FitOption, o)
        return _pick(cls, data, best=option(data.get("best")),
                     options=[_pick(FitOption, o) for o in data.get("options", [])],
                     nearest=option(data.get("nearest")))


@dataclass
class Fix:
    change: str = ""
    effect: str = ""


@dataclass
class Diagnosis:
    """vramfit.doctor/1: the stage an out-of-memory log failed at, its cause and the fixes."""
    found: bool = False
    engine: str = ""
    stage: str = ""
    cause: str = ""
    summary: str = ""
    stage_evidence: str = ""
    numbers: Dict[str, Any] = field(default_factory=dict)
    fixes: List[Fix] = field(default_factory=list)
    evidence: List[Any] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    # {kind, line, text, usual_cause}: the failure when cause is "not_out_of_memory", else
    # another error the log shows beside the out-of-memory; None when none. Cause
    # "undetermined": the log does not say whether the failure was an out-of-memory.
    other_error: Optional[Dict[str, Any]] = None
    log: Dict[str, Any] = field(default_factory=dict)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Diagnosis":
        return _pick(cls, data, fixes=[_pick(Fix, f) for f in data.get("fixes", [])])
