"""The README's pytest guard, run as written (so the example cannot rot): the Python block
after the `pytest-guard` marker is written to a file and run by pytest with the plugin."""

import re
import subprocess
import sys


def test_readme_guard_runs(root, tmp_path):
    readme = (root / "README.md").read_text()
    found = re.search(r"<!-- pytest-guard -->\s*```python\n(.*?)```", readme, re.S)
    assert found, "README.md has no ```python block after <!-- pytest-guard -->"
    code = found.group(1)
    assert len(code.strip().splitlines()) <= 5, "the README promises a five-line guard"
    (tmp_path / "test_deploy.py").write_text(code)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path / "test_deploy.py")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
