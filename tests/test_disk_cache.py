"""The persistent compilation cache (funcgrad.core.disk_cache): executables kept on disk
across runs. Runs of a small script in fresh processes, each with its own cache directory
(``FUNCGRAD_CACHE_DIR``) and without the test suite's own cache (conftest's, which keeps
priority in this process); counts come from ``disk_cache.stats()``, never from timing."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import jax
import pytest

import funcgrad as fg
from funcgrad.core import disk_cache

REPO = Path(__file__).resolve().parents[1]

# two jitted programs (a function and its gradient), then with ``extra`` a third one, after
# switching the cache on or off with funcgrad.config with ``toggle``
SCRIPT = """
import json, sys
import numpy as np
import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import disk_cache, tiers

def f(x):
    return fnp.sum(fnp.sin(x) * x)

x = np.arange(4.0, dtype=np.float32)
out = [float(fg.jit(f)(x)), np.asarray(fg.jit(fg.grad(f))(x)).tolist()]
first = disk_cache.stats()
if "toggle" in sys.argv:
    fg.config.update("funcgrad_persistent_cache", not first["enabled"])
if "extra" in sys.argv:
    out.append(float(fg.jit(lambda x: fnp.max(fnp.cos(x)))(x)))
tiers.wait_for_background()
print(json.dumps({"out": out, "stats": disk_cache.stats(), "first": first}))
"""


def _run(cache: Path, *args: str, env: dict[str, str] | None = None, prefix=()) -> dict:
    child = dict(os.environ)
    for k in ("JAX_COMPILATION_CACHE_DIR", "FUNCGRAD_PERSISTENT_CACHE"):
        child.pop(k, None)
    child["FUNCGRAD_CACHE_DIR"] = str(cache)
    child["JAX_PLATFORMS"] = "cpu"
    child.update(env or {})
    r = subprocess.run(
        [*prefix, sys.executable, "-c", SCRIPT, *args],
        cwd=REPO,
        env=child,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    res["stderr"] = r.stderr
    return res


def _entries(d: str | Path) -> list[Path]:
    return sorted(Path(d).glob("*-cache"))


@pytest.fixture(scope="module")
def _first_run(tmp_path_factory) -> tuple[Path, Path, dict]:
    base = tmp_path_factory.mktemp("fg-disk-cache")
    first = _run(base / "cache")
    shutil.copytree(base / "cache", base / "pristine")
    return base / "cache", base / "pristine", first


# the tests reading ``_first_run`` run on one xdist worker, so the script's first run is
# made once per run, not once in each worker that draws one of them
ON_FIRST_RUN = pytest.mark.xdist_group("disk_cache_first_run")


@pytest.fixture
def populated(_first_run) -> tuple[Path, dict]:
    """A cache directory as the script's first run left it, at the path it was written
    to: JAX's cache keys hold the directory's path (it is one of XLA's compile options),
    so a copy elsewhere would never hit."""
    cache, pristine, first = _first_run
    shutil.rmtree(cache)
    shutil.copytree(pristine, cache)
    return cache, first


@ON_FIRST_RUN
def test_second_run_loads_everything_from_disk(populated):
    cache, first = populated
    s1 = first["stats"]
    assert s1["enabled"] and s1["owner"] == "funcgrad" and not s1["read_only"]
    # the version subdirectory: one per (jax, jaxlib, funcgrad) versions, under the root
    d = Path(s1["dir"])
    assert d.parent == cache and d.name == disk_cache.version_tag()
    assert jax.__version__ in d.name and fg.__version__ in d.name
    assert s1["hits"] == 0 and s1["misses"] >= 2 and s1["writes"] == s1["misses"]
    assert len(_entries(d)) == s1["entries"] == s1["writes"]

    second = _run(cache)  # the same directory, read again in a fresh process
    s2 = second["stats"]
    assert second["out"] == first["out"]
    assert s2["misses"] == 0 and s2["writes"] == 0, s2  # compiled nothing
    assert s2["hits"] == s1["misses"]  # every executable came from disk
    assert s2["entries"] == s1["entries"]


def test_off_switch(tmp_path):
    # FUNCGRAD_PERSISTENT_CACHE=0: no cache; the config option turns it on mid-run
    res = _run(tmp_path, "toggle", "extra", env={"FUNCGRAD_PERSISTENT_CACHE": "0"})
    off, on = res["first"], res["stats"]
    assert not off["enabled"] and off["owner"] is None and off["dir"] is None
    assert off["misses"] == off["writes"] == 0
    assert on["enabled"] and on["owner"] == "funcgrad"
    assert on["misses"] == on["writes"] == 1  # only the program compiled after switching on
    assert len(list(tmp_path.rglob("*-cache"))) == 1


@pytest.fixture
def _without_suite_cache(monkeypatch, tmp_path):
    """This process as if nobody had set jax_compilation_cache_dir (conftest did): the
    suite's setting is put back, and JAX made to open it again, afterwards."""
    from jax.experimental.compilation_cache import compilation_cache

    saved = (
        jax.config.jax_compilation_cache_dir,
        jax.config.jax_persistent_cache_min_compile_time_secs,
    )
    monkeypatch.setenv("FUNCGRAD_CACHE_DIR", str(tmp_path))
    jax.config.update("jax_compilation_cache_dir", None)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    monkeypatch.delenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", raising=False)
    compilation_cache.reset_cache()
    try:
        yield tmp_path
    finally:
        disk_cache._apply(False)
        jax.config.update("jax_compilation_cache_dir", saved[0])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", saved[1])
        compilation_cache.reset_cache()
        disk_cache._state.__init__()


def test_config_option_turns_it_on_and_off(_without_suite_cache):
    fg.config.update("funcgrad_persistent_cache", True)
    s = disk_cache.stats()
    assert s["owner"] == "funcgrad" and s["dir"] == str(disk_cache.cache_dir())
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 0.0
    fg.config.update("funcgrad_persistent_cache", False)
    s = disk_cache.stats()
    assert not s["enabled"] and s["owner"] is None and s["dir"] is None
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 1.0  # JAX's, put back
    # a threshold the user set is kept
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 2.0)
    fg.config.update("funcgrad_persistent_cache", True)
    assert disk_cache.stats()["owner"] == "funcgrad"
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 2.0
    fg.config.update("funcgrad_persistent_cache", False)
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 2.0
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    # a directory the user sets is theirs: switching funcgrad's cache on leaves it alone
    jax.config.update("jax_compilation_cache_dir", str(_without_suite_cache / "mine"))
    fg.config.update("funcgrad_persistent_cache", True)
    s = disk_cache.stats()
    assert s["owner"] == "user" and s["dir"] == str(_without_suite_cache / "mine")
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 1.0


def test_user_setting_keeps_priority():
    # conftest pointed JAX's cache at the run's temporary directory before funcgrad was
    # imported: funcgrad leaves it alone, and its switch does not touch it
    s = disk_cache.stats()
    assert s["owner"] == "user" and s["dir"] == os.environ["FUNCGRAD_TEST_XLA_CACHE"]
    fg.config.update("funcgrad_persistent_cache", False)
    try:
        assert jax.config.jax_compilation_cache_dir == s["dir"]
    finally:
        fg.config.update("funcgrad_persistent_cache", True)
    assert jax.config.jax_compilation_cache_dir == s["dir"]


def test_directory_that_cannot_be_created(_without_suite_cache, monkeypatch):
    blocker = _without_suite_cache / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("FUNCGRAD_CACHE_DIR", str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="persistent compilation cache: cannot create"):
        fg.config.update("funcgrad_persistent_cache", True)
    s = disk_cache.stats()
    assert not s["enabled"] and s["dir"] is None and "cannot create" in s["error"]
    assert float(fg.jit(lambda x: x * 3.0)(2.0)) == 6.0


def _without_write_permission() -> tuple[str, ...] | None:
    """A command prefix under which chmod's bits hold (root ignores them)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return (setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner")


@ON_FIRST_RUN
def test_read_only_directory_is_read_not_written(populated):
    prefix = _without_write_permission()
    if prefix is None:
        pytest.skip("running as root without setpriv: chmod cannot make a directory read-only")
    cache, first = populated
    d = Path(first["stats"]["dir"])
    d.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    try:
        res = _run(cache, "extra", prefix=prefix)
    finally:
        d.chmod(stat.S_IRWXU)
    # a warning; the entries there are read; the program that is not there is compiled
    # and not written (JAX would warn at each write it tried)
    s = res["stats"]
    assert s["read_only"] and "not writable" in res["stderr"]
    assert s["hits"] == first["stats"]["misses"] and s["misses"] == 1 and s["writes"] == 0
    assert res["out"][:2] == first["out"]
    assert "Error writing" not in res["stderr"]
    assert len(_entries(d)) == first["stats"]["entries"]


@ON_FIRST_RUN
def test_corrupt_entries_are_compiled_again(populated):
    cache, first = populated
    entries = _entries(first["stats"]["dir"])
    for i, e in enumerate(entries):  # garbage, and an empty file
        e.write_bytes(b"garbage \x00\xff" * 7 if i else b"")
    res = _run(cache)
    s = res["stats"]
    assert res["out"] == first["out"]
    assert s["hits"] == 0 and s["misses"] == len(entries)
    assert "cache" in res["stderr"]  # JAX's warning for each entry it could not read


def test_trim_drops_least_recently_used_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("FUNCGRAD_CACHE_DIR", str(tmp_path))
    old = tmp_path / "jax-0.0.1_jaxlib-0.0.1_funcgrad-0.0.1"
    cur = tmp_path / disk_cache.version_tag()
    other = tmp_path / "not-ours"
    for d in (old, cur, other):
        d.mkdir()
    files = []
    for i, d in enumerate([old, old, cur, cur, cur, other]):
        f = d / f"jit_f-{i:04d}-cache"
        f.write_bytes(b"x" * 1000)
        os.utime(f, (1_000_000 + i, 1_000_000 + i))  # access times: oldest first
        files.append(f)
    (cur / "jit_f-0002-atime").write_bytes(b"t")
    (cur / "notes.txt").write_text("kept")
    assert disk_cache.trim(10_000) == 0  # under the bound: nothing
    assert disk_cache.trim(3000) == 3000  # 5000 bytes of entries -> at most 2250
    assert [f.exists() for f in files] == [False, False, False, True, True, True]
    assert not old.exists() and not (cur / "jit_f-0002-atime").exists()
    assert (cur / "notes.txt").exists() and other.exists()
    assert disk_cache.clear() == 2  # this version's entries; nothing else
    assert not list(cur.glob("*-cache")) and (cur / "notes.txt").exists()
    assert (other / "jit_f-0005-cache").exists()


def test_cache_root_from_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("FUNCGRAD_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.cache_root() == tmp_path / "funcgrad" / "xla"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert disk_cache.cache_root() == Path.home() / ".cache" / "funcgrad" / "xla"
    monkeypatch.setenv("FUNCGRAD_CACHE_DIR", str(tmp_path / "mine"))
    assert disk_cache.cache_dir() == tmp_path / "mine" / disk_cache.version_tag()
