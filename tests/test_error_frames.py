"""Errors point at the user's line, past funcgrad's frames and those of packages that
registered themselves with ``funcgrad.errors.register_internal_package`` (compat)."""

import sys

import pytest

import funcgrad.errors
import funcgrad.numpy as fnp
from funcgrad.core import errors as core_errors


def test_registered_package_frames_are_skipped(tmp_path, monkeypatch):
    pkg = tmp_path / "fg_frames_lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import funcgrad.numpy as fnp\n\n\ndef bad(a, b):\n    return fnp.add(a, b)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(core_errors, "_PKG_DIRS", core_errors._PKG_DIRS)  # restored after
    import fg_frames_lib

    with pytest.raises(TypeError) as before:
        fg_frames_lib.bad(fnp.ones(3), fnp.ones(4))
    assert f"{pkg / '__init__.py'}:5" in str(before.value)  # the library's line: not registered

    funcgrad.errors.register_internal_package("fg_frames_lib")
    with pytest.raises(TypeError) as after:
        fg_frames_lib.bad(fnp.ones(3), fnp.ones(4))
    assert "fg_frames_lib" not in str(after.value)
    assert f"{__file__}:" in str(after.value)  # this test's line
    sys.modules.pop("fg_frames_lib")


def test_register_rejects_a_non_package():
    with pytest.raises(ValueError, match="not a package"):
        funcgrad.errors.register_internal_package("no_such_package_for_funcgrad")


def test_compat_errors_point_at_the_user_line():
    import compat.torch as torch

    with pytest.raises((TypeError, RuntimeError, ValueError)) as e:
        torch.ones(3) + torch.ones(4)
    assert f"{__file__}:" in str(e.value)
