"""The PyTorch runner's handling of several test files, on self-made modules (no upstream
code): the device-type shim names cases as PyTorch does (``@dtypes`` entries of several
dtypes, ``subtest`` names, tests without a ``device`` argument, precision overrides),
assertEqual compares module containers item by item, and the ``torch_npu`` lines of
Ascend's copies are undone."""

from __future__ import annotations

import pathlib
import textwrap

import pytest

from tools.conformance.common import compare_file
from tools.conformance.run_torch import ENV, OUT_OF_SCOPE, undo_npu

DEVICE_MODULE = """
import torch
from torch.testing._internal.common_utils import TestCase, parametrize, subtest
from torch.testing._internal.common_device_type import (
    instantiate_device_type_tests, dtypes, precisionOverride, onlyCUDA)


class TestShapes(TestCase):
    @dtypes(*[(torch.float32, torch.int64), (torch.float64, torch.bool)])
    def test_pair(self, device, dtypes):
        a = torch.ones(2, dtype=dtypes[0], device=device)
        self.assertEqual(a.to(dtypes[1]).dtype, dtypes[1])

    @parametrize("n", [subtest(2, name="two"), 3])
    @dtypes(torch.float32)
    def test_named(self, device, dtype, n):
        self.assertEqual(torch.zeros(n, dtype=dtype).sum().item(), 0)

    @parametrize("dtype", [torch.int32, torch.float64])
    def test_param_dtype(self, device, dtype):
        self.assertEqual(torch.ones(2, dtype=dtype, device=device).dtype, dtype)

    def test_no_device(self):
        self.assertEqual(torch.ones(3).sum().item(), 3)

    @precisionOverride({torch.float32: 0.5})
    @dtypes(torch.float32)
    def test_loose(self, device, dtype):
        self.assertEqual(torch.tensor([1.0], dtype=dtype), torch.tensor([1.25], dtype=dtype))

    @onlyCUDA
    def test_gpu_only(self, device):
        pass

    def test_containers(self, device):
        a, b = torch.nn.ReLU(), torch.nn.Tanh()
        self.assertEqual(torch.nn.Sequential(a, b)[1:], torch.nn.Sequential(b))
        self.assertEqual(torch.nn.ModuleList([a]), [a])


instantiate_device_type_tests(TestShapes, globals())
"""


def test_device_type_cases_as_pytorch(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("torch")  # the baseline run is PyTorch's
    path = tmp_path / "tiny_device_test.py"
    path.write_text(DEVICE_MODULE)
    res = compare_file("torch", path, 0, 60.0, OUT_OF_SCOPE, ENV, parallel=False)
    expected = {
        "TestShapesCPU.test_pair_cpu_float32_int64",
        "TestShapesCPU.test_pair_cpu_float64_bool",
        "TestShapesCPU.test_named_two_cpu_float32",
        "TestShapesCPU.test_named_n_3_cpu_float32",
        "TestShapesCPU.test_no_device_cpu",
        "TestShapesCPU.test_param_dtype_int32_cpu_int32",
        "TestShapesCPU.test_param_dtype_float64_cpu_float64",
        "TestShapesCPU.test_loose_cpu_float32",
        "TestShapesCPU.test_gpu_only_cpu",
        "TestShapesCPU.test_containers_cpu",
    }
    assert set(res.upstream) == set(res.swapped) == expected
    for name in expected - {"TestShapesCPU.test_gpu_only_cpu"}:
        assert res.upstream[name]["outcome"] == "pass", res.upstream[name]
        assert res.swapped[name]["outcome"] == "pass", res.swapped[name]
    assert res.upstream["TestShapesCPU.test_gpu_only_cpu"]["outcome"] == "skip"
    assert res.swapped["TestShapesCPU.test_gpu_only_cpu"]["outcome"] == "skip"


def test_undo_npu_lines() -> None:
    text = textwrap.dedent(
        """\
        import torch
        import torch_npu
        import torch_npu.testing
        from url import get_url
        from torch.testing._internal.common_device_type import onlyPRIVATEUSE1, dtypesIfPRIVATEUSE1
        if torch.npu.is_available() and TEST_PRIVATEUSE1:
            x = torch.ones(2, device='npu').npu()
            y = x.to("npu:1")
        n = torch_npu.npu.device_count()
        instantiate_device_type_tests(TestX, globals(), only_for='privateuse1')
        kind = torch._C._get_privateuse1_backend_name()
        inputs = 'input'
        from torch_npu.testing.common_distributed import skipIfUnsupportMultiNPU
        DEVICE_NAME = torch_npu.npu.get_device_name(0)
        devices = [torch.cpu, torch_npu.npu]
        if s.is_npu and is_npu_sm86:
            @SupportedDevices(["Ascend910B"])
        """
    )
    assert undo_npu(text) == textwrap.dedent(
        """\
        import torch
        def get_url(name):
            raise unittest.SkipTest('downloads test data')
        from torch.testing._internal.common_device_type import onlyCUDA, dtypesIfCUDA
        if False and TEST_CUDA:
            x = torch.ones(2, device='cuda').cuda()
            y = x.to("cuda:1")
        n = 0
        instantiate_device_type_tests(TestX, globals())
        kind = 'cuda'
        inputs = 'input'
        def skipIfUnsupportMultiNPU(n):
            return unittest.skip('needs several NPUs')
        DEVICE_NAME = ''
        devices = [torch.cpu, torch.cuda]
        if s.is_cuda and is_npu_sm86:
        """
    )
