"""The package's functions against the real vramfit command (VRAMFIT_BIN): typed results
mirroring the JSON contracts, exit codes as results or VramfitError, what-if quantization,
and assert_fits's failure message (the plan's stage table)."""

import subprocess
import sys

import pytest

import vramfit
from vramfit import NotFitting, VramfitError


def test_plan_is_typed_and_fits():
    p = vramfit.plan("qwen3-8b", gpu="rtx-4090", max_model_len=8192)
    assert isinstance(p, vramfit.Plan)
    assert p.fits and p.failure_stage is None
    assert p.engine == "vllm"
    assert isinstance(p.gpus[0], vramfit.GpuPlan)
    assert p.gpus[0].weights_bytes > 15 * 2**30
    assert p.kv_cache_tokens > 8192
    assert p.max_model_len == 8192
    assert p.what_if is None
    assert p.raw["schema"] == "vramfit.plan/1"


def test_plan_that_fails_names_the_stage():
    p = vramfit.plan("qwen3-32b", gpu="rtx-4090")
    assert not p.fits
    assert p.failure_stage == "load"
    assert p.margin_bytes < 0


def test_bad_input_raises_with_message_and_exit_code():
    with pytest.raises(VramfitError) as e:
        vramfit.plan("qwen3-8b", gpu="no-such-card")
    assert e.value.exit_code == 2
    assert "no-such-card" in e.value.message
    with pytest.raises(VramfitError) as e:
        vramfit.plan("qwen3-8b", gpu="rtx-4090", gpu_memory_utilization=1.5)
    assert e.value.exit_code == 2
    # What vLLM itself refuses is a plan that fails at startup, not an input error.
    p = vramfit.plan("qwen3-8b", gpu="rtx-4090", tensor_parallel_size=3)
    assert not p.fits
    assert p.failure_stage == "startup"
    assert "divisible by tensor parallel size (3)" in p.failure_message


def test_missing_binary_is_an_error(monkeypatch):
    with pytest.raises(VramfitError) as e:
        vramfit.inspect("qwen3-8b", binary="/nonexistent/vramfit")
    assert e.value.exit_code == 127


def test_check_reads_a_command_line():
    ok = vramfit.check("vllm serve Qwen/Qwen3-8B --max-model-len 8192", gpu="rtx-4090")
    assert ok.fits
    bad = vramfit.check(["vllm", "serve", "Qwen/Qwen3-32B"], gpu="rtx-4090")
    assert not bad.fits and bad.failure_stage == "load"


def test_fit_finds_settings():
    f = vramfit.fit("qwen3-8b", gpu="rtx-4090", no_variants=True)
    assert f.met and f.goal == "context"
    assert isinstance(f.best, vramfit.FitOption)
    assert f.best.max_model_len > 8192
    assert f.best.command.startswith("vllm serve")
    unmet = vramfit.fit("qwen3-8b", gpu="rtx-4090", min_context=40960,
                        min_concurrency=100, no_variants=True)
    assert not unmet.met and unmet.best is None


def test_inspect_and_what_if_quantization():
    base = vramfit.inspect("qwen3-8b")
    assert isinstance(base, vramfit.Inventory)
    assert base.parameters == 8_190_735_360
    assert base.quantization.method == "none"
    gptq3 = vramfit.inspect("qwen3-8b", as_quantized="gptq", bits=3)
    assert gptq3.what_if == "GPTQ 3-bit g128"
    assert gptq3.parameters == base.parameters
    assert gptq3.quantization.method == "gptq" and gptq3.quantization.bits == 3
    assert gptq3.total_bytes < base.total_bytes / 3
    awq = vramfit.plan("qwen3-32b", gpu="rtx-4090", as_quantized="awq", max_model_len=4096)
    assert awq.what_if == "AWQ 4-bit g128"
    with pytest.raises(VramfitError) as e:
        vramfit.inspect("qwen3-8b", as_quantized="awq", bits=3)
    assert "awq packs 4 bits only" in e.value.message


def test_doctor_reads_a_log(root):
    log = root / "tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log"
    d = vramfit.doctor(log)
    assert isinstance(d, vramfit.Diagnosis)
    assert d.found and d.stage == "kv_cache"
    assert d.fixes and isinstance(d.fixes[0], vramfit.Fix)
    same = vramfit.doctor(text=log.read_text())
    assert same.stage == d.stage
    with pytest.raises(VramfitError) as e:
        vramfit.doctor(text="nothing to see here\n")
    assert e.value.exit_code == 2


def test_assert_fits_passes_and_fails_with_the_stage_table():
    assert vramfit.assert_fits("qwen3-8b", gpu="rtx-4090", max_model_len=8192).fits
    with pytest.raises(NotFitting) as e:
        vramfit.assert_fits("qwen3-32b", gpu="rtx-4090")
    message = str(e.value)
    assert "load" in message and "FAILS" in message and "verdict" in message
    assert isinstance(e.value, AssertionError) and not e.value.plan.fits
    with pytest.raises(NotFitting) as e:
        vramfit.assert_fits(command="vllm serve Qwen/Qwen3-32B", gpu="rtx-4090")
    assert "FAILS" in str(e.value)


def test_plugin_fixture_and_failure_report(tmp_path):
    """The pytest11 entry point is installed: a test asking for the assert_fits fixture gets
    it, and a failing one reports the stage table."""
    (tmp_path / "test_guard.py").write_text(
        "def test_too_big(assert_fits):\n"
        "    assert_fits('qwen3-32b', gpu='rtx-4090')\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path / "test_guard.py")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "NotFitting" in run.stdout and "FAILS" in run.stdout
