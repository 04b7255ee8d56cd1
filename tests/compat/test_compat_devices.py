"""Devices, ``torch.cuda``/``accelerator``/``backends``, runtime switches and the
single-process stand-ins (``DataParallel``, ``distributed``, ``compile``, ``jit``,
``onnx``), each checked against real (CPU-only) PyTorch as the oracle.

On a machine whose jax has a GPU the CUDA cases check the GPU path instead.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch
from compat._core import device as _dev

HAS_GPU = bool(_dev.gpus())


def _outcome(f):
    """``('ok', value)`` or ``('raise', exception type)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", f())
    except Exception as e:
        return ("raise", type(e))


# ----------------------------------------------------------------------------- torch.device


@pytest.mark.parametrize(
    "args",
    [
        ("cpu",),
        ("cuda",),
        ("cuda:0",),
        ("cuda:3",),
        ("cuda", 1),
        ("cpu", 0),
        ("mps",),
        ("xla",),
        ("meta",),
    ],
)
def test_device_attributes_repr_str_hash(lib, args):
    d = lib.device(*args)
    ref = (d.type, d.index, str(d), repr(d), hash(d))
    assert (
        ref
        == {
            ("cpu",): ("cpu", None, "cpu", "device(type='cpu')", 255),
            ("cuda",): ("cuda", None, "cuda", "device(type='cuda')", 65791),
            ("cuda:0",): ("cuda", 0, "cuda:0", "device(type='cuda', index=0)", 65536),
            ("cuda:3",): ("cuda", 3, "cuda:3", "device(type='cuda', index=3)", 65539),
            ("cuda", 1): ("cuda", 1, "cuda:1", "device(type='cuda', index=1)", 65537),
            ("cpu", 0): ("cpu", 0, "cpu:0", "device(type='cpu', index=0)", 0),
            ("mps",): ("mps", None, "mps", "device(type='mps')", (13 << 16) | 255),
            ("xla",): ("xla", None, "xla", "device(type='xla')", (9 << 16) | 255),
            ("meta",): ("meta", None, "meta", "device(type='meta')", (14 << 16) | 255),
        }[args]
    )


def test_device_equality(lib):
    d = lib.device
    assert d("cuda:0") == d("cuda", 0)
    assert d("cuda:0") != d("cuda")
    assert d("cpu") != d("cpu", 0)
    assert d("cpu") != "cpu"
    assert d(d("cuda:1")) == d("cuda:1")
    assert d(type="cuda", index=2).index == 2
    assert len({d("cpu"), d("cpu"), d("cuda")}) == 2


@pytest.mark.parametrize(
    "args",
    [("CUDA",), ("bad",), (" cuda",), ("cuda:x",), ("cuda:01",), ("cuda", -1), ("cuda:0", 1)],
)
def test_device_bad_strings_raise_runtime_error(args, real_torch):
    with pytest.raises(RuntimeError) as ours:
        ctorch.device(*args)
    with pytest.raises(RuntimeError) as theirs:
        real_torch.device(*args)
    assert str(ours.value).split(":")[0] == str(theirs.value).split(":")[0]


@pytest.mark.parametrize("args", [(None,), (1.0,), ("cuda", 1.0)])
def test_device_bad_types_raise_type_error(lib, args):
    with pytest.raises(TypeError):
        lib.device(*args)


# ----------------------------------------------------------------------------- tensors on devices


def test_tensor_device_and_flags(lib):
    x = lib.zeros(2)
    assert isinstance(x.device, lib.device)
    assert x.device == lib.device("cpu") and str(x.device) == "cpu"
    assert (x.is_cpu, x.is_cuda, x.is_xpu, x.is_mps, x.get_device()) == (
        True,
        False,
        False,
        False,
        -1,
    )


def test_to_cpu_returns_self_and_casts(lib):
    x = lib.tensor([1.5, 2.5])
    assert x.to("cpu") is x and x.cpu() is x and x.to(lib.device("cpu")) is x
    assert x.to("cpu:0").device == lib.device("cpu")
    assert x.to(lib.float32) is x
    y = x.to("cpu", lib.int32)
    assert y.dtype == lib.int32 and y.tolist() == [1, 2]
    z = x.to(device="cpu", dtype=lib.float64)
    assert z.dtype == lib.float64
    assert x.to(lib.zeros(1, dtype=lib.int64)).dtype == lib.int64
    assert x.to("cpu", copy=True) is not x
    assert x.to("cpu", non_blocking=True) is x


def test_to_keeps_graph_for_dtype_changes(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    assert x.cpu() is x
    y = x.to(lib.float64)
    assert y.grad_fn.name() == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_to_bad_arguments(lib):
    x = lib.zeros(2)
    with pytest.raises(RuntimeError):
        x.to("bad")
    with pytest.raises(TypeError):
        x.to(lib.float64, lib.device("cpu"))


@pytest.mark.parametrize("device", ["cpu", "cpu:0"])
@pytest.mark.parametrize(
    "make",
    [
        lambda T, d: T.zeros(2, 3, device=d),
        lambda T, d: T.ones(2, device=d),
        lambda T, d: T.full((2,), 3.0, device=d),
        lambda T, d: T.empty(2, device=d),
        lambda T, d: T.tensor([1, 2], device=d),
        lambda T, d: T.arange(3, device=d),
        lambda T, d: T.linspace(0, 1, 3, device=d),
        lambda T, d: T.eye(2, device=d),
        lambda T, d: T.rand(2, device=d),
        lambda T, d: T.randn(2, device=d),
        lambda T, d: T.randint(0, 3, (2,), device=d),
        lambda T, d: T.randperm(3, device=d),
        lambda T, d: T.zeros_like(T.ones(2), device=d),
        lambda T, d: T.as_tensor([1.0], device=d),
        lambda T, d: T.ones(2).new_zeros(2, device=d),
        lambda T, d: T.ones(2).new_full((2,), 3.0, device=d),
        lambda T, d: T.ones(2).new_tensor([1, 2], device=d),
    ],
)
def test_constructors_accept_cpu_device(lib, make, device):
    assert make(lib, device).device == lib.device("cpu")
    assert make(lib, lib.device(device)).device == lib.device("cpu")


@pytest.mark.skipif(HAS_GPU, reason="checks the CPU-only behaviour (jax has a GPU here)")
@pytest.mark.parametrize(
    "f",
    [
        lambda T: T.zeros(2).cuda(),
        lambda T: T.zeros(2).to("cuda"),
        lambda T: T.zeros(2).to("cuda:0"),
        lambda T: T.zeros(2).to(T.device("cuda")),
        lambda T: T.zeros(2).to(device="cuda"),
        lambda T: T.zeros(2, device="cuda"),
        lambda T: T.tensor([1.0], device="cuda"),
        lambda T: T.randn(2, device="cuda"),
        lambda T: T.zeros(2).to("mps"),
        lambda T: T.zeros(2).to("xpu"),
        lambda T: T.zeros(2).xpu(),
        lambda T: T.zeros(2).to(0),
        lambda T: T.zeros(2).new_zeros(2, device="cuda"),
        lambda T: T.device(0),
        lambda T: T.nn.Linear(2, 2).cuda(),
        lambda T: T.nn.Linear(2, 2).to("cuda"),
    ],
)
def test_cuda_without_gpu_raises_as_cpu_pytorch(f, real_torch):
    ours, theirs = _outcome(lambda: f(ctorch)), _outcome(lambda: f(real_torch))
    assert ours[0] == theirs[0] == "raise"
    assert ours[1] is theirs[1]


@pytest.mark.skipif(not HAS_GPU, reason="needs a jax GPU")
def test_cuda_moves_to_jax_gpu():
    x = ctorch.arange(4.0)
    y = x.cuda()
    assert y.device == ctorch.device("cuda", 0) and y.is_cuda and not y.is_cpu
    assert (y * 2).device == y.device
    assert np.allclose((y * 2).cpu().numpy(), [0, 2, 4, 6])
    assert y.cpu().device == ctorch.device("cpu")
    z = ctorch.zeros(2, device="cuda")
    assert z.is_cuda and "device='cuda:0'" in repr(z)
    m = ctorch.nn.Linear(2, 3).to("cuda")
    assert m.weight.is_cuda and m(ctorch.ones(1, 2, device="cuda")).is_cuda


def test_module_to_device_keeps_parameters(lib):
    m = lib.nn.Linear(2, 3)
    w = m.weight
    assert m.to("cpu") is m and m.weight is w
    assert m.to(lib.device("cpu")).cpu() is m and m.weight is w
    assert m.to("cpu", lib.float64).weight.dtype == lib.float64


# ----------------------------------------------------------------------------- torch.cuda & co


_CUDA_CALLS = [
    lambda T: T.cuda.is_available(),
    lambda T: T.cuda.device_count(),
    lambda T: T.cuda.is_initialized(),
    lambda T: T.cuda.manual_seed(0),
    lambda T: T.cuda.manual_seed_all(0),
    lambda T: T.cuda.seed(),
    lambda T: T.cuda.empty_cache(),
    lambda T: T.cuda.memory_allocated(),
    lambda T: T.cuda.max_memory_allocated(),
    lambda T: T.cuda.memory_reserved(),
    lambda T: T.cuda.is_bf16_supported(),
    lambda T: T.cuda.current_device(),
    lambda T: T.cuda.synchronize(),
    lambda T: T.cuda.get_device_name(),
    lambda T: T.cuda.get_device_name(0),
    lambda T: T.cuda.get_device_capability(),
    lambda T: T.cuda.get_device_properties(0),
    lambda T: T.cuda.initial_seed(),
    lambda T: T.accelerator.is_available(),
    lambda T: T.accelerator.current_accelerator(),
    lambda T: T.accelerator.device_count(),
    lambda T: T.backends.mps.is_available(),
    lambda T: T.backends.mps.is_built(),
    lambda T: T.backends.cudnn.is_available(),
    lambda T: T.backends.cudnn.enabled,
    lambda T: T.backends.cudnn.benchmark,
    lambda T: T.backends.cudnn.deterministic,
    lambda T: T.backends.cudnn.allow_tf32,
    lambda T: T.backends.cuda.matmul.allow_tf32,
    lambda T: T.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    lambda T: T.get_float32_matmul_precision(),
    lambda T: T.are_deterministic_algorithms_enabled(),
    lambda T: T.distributed.is_initialized(),
    lambda T: T.distributed.get_rank(),
    lambda T: T.distributed.get_world_size(),
    lambda T: T.distributed.get_backend(),
    lambda T: T.distributed.barrier(),
    lambda T: T.distributed.all_reduce(T.zeros(2)),
    lambda T: T.distributed.destroy_process_group(),
    lambda T: T.nn.parallel.DistributedDataParallel(T.nn.Linear(2, 2)),
]


@pytest.mark.skipif(HAS_GPU, reason="compares with CPU-only PyTorch")
@pytest.mark.parametrize("i", range(len(_CUDA_CALLS)))
def test_runtime_queries_match_cpu_pytorch(i, real_torch):
    f = _CUDA_CALLS[i]
    ours, theirs = _outcome(lambda: f(ctorch)), _outcome(lambda: f(real_torch))
    assert ours[0] == theirs[0]
    if ours[0] == "raise":
        assert ours[1] is theirs[1]
    else:
        assert ours[1] == theirs[1]


def test_submodules_import_and_attribute_access():
    import compat.torch.backends.cudnn as cudnn
    import compat.torch.cuda
    import compat.torch.distributed as dist
    import compat.torch.jit
    import compat.torch.onnx

    assert ctorch.cuda is compat.torch.cuda and ctorch.distributed is dist
    assert ctorch.backends.cudnn is cudnn
    assert ctorch.jit is compat.torch.jit and ctorch.cuda.amp.GradScaler is not None


def test_backend_flags_settable(lib):
    cudnn = lib.backends.cudnn
    before = (cudnn.benchmark, cudnn.deterministic, lib.backends.cuda.matmul.allow_tf32)
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        lib.backends.cuda.matmul.allow_tf32 = True
        assert (cudnn.benchmark, cudnn.deterministic) == (True, True)
        assert lib.backends.cuda.matmul.allow_tf32 is True
    finally:
        cudnn.benchmark, cudnn.deterministic = before[:2]
        lib.backends.cuda.matmul.allow_tf32 = before[2]


def test_runtime_switches(lib):
    old_threads, old_prec = lib.get_num_threads(), lib.get_float32_matmul_precision()
    try:
        lib.set_num_threads(1)
        assert lib.get_num_threads() == 1
        with pytest.raises(RuntimeError):
            lib.set_num_threads(0)
        with pytest.raises(RuntimeError):
            lib.set_num_threads(1.5)
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning):
            lib.set_float32_matmul_precision("bad")
        assert lib.get_float32_matmul_precision() == "high"
        lib.use_deterministic_algorithms(True)
        assert lib.are_deterministic_algorithms_enabled()
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms(1)
    finally:
        lib.use_deterministic_algorithms(False)
        lib.set_num_threads(old_threads)
        lib.set_float32_matmul_precision(old_prec)


# ----------------------------------------------------------------------------- amp


@pytest.mark.skipif(HAS_GPU, reason="compares with CPU-only PyTorch")
def test_amp_cuda_stubs_disable_with_warnings(lib):
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = lib.amp.GradScaler("cuda")
    assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
    x = lib.tensor(2.0)
    assert s.scale(x) is x
    m = lib.nn.Linear(2, 1)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    m(lib.ones(1, 2)).sum().backward()
    before = m.bias.detach().clone()
    s.step(opt)
    s.update()
    assert np.allclose(m.bias.detach().numpy(), before.numpy() - 0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.cuda.amp.GradScaler()
        lib.cuda.amp.autocast()
    assert {FutureWarning, UserWarning} <= {w.category for w in caught}
    with pytest.warns(UserWarning, match="Disabling autocast"):
        ac = lib.autocast("cuda")
    with ac:
        assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.float32


def test_enabled_grad_scaler_follows_pytorch(lib):
    torch = lib
    torch.manual_seed(0)
    m = torch.nn.Linear(2, 1)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[0.5, -0.25]]))
        m.bias.copy_(torch.tensor([0.1]))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    s = torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    scales = []
    for step in range(4):
        opt.zero_grad()
        loss = m(torch.ones(1, 2)).sum()
        if step == 1:
            loss = loss * float("inf")
        s.scale(loss).backward()
        s.step(opt)
        s.update()
        scales.append(s.get_scale())
    assert scales == [4.0, 2.0, 2.0, 4.0]
    assert np.allclose(m.bias.detach().numpy(), [0.1 - 0.3])
    assert s.state_dict()["scale"] == 4.0


# ----------------------------------------------------------------------------- stand-ins


def test_data_parallel_wraps_module(lib):
    lib.manual_seed(0)
    inner = lib.nn.Linear(2, 3)
    dp = lib.nn.DataParallel(inner)
    assert dp.module is inner and lib.nn.parallel.DataParallel is lib.nn.DataParallel
    x = lib.ones(4, 2)
    assert np.allclose(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp) == (
        "DataParallel(\n  (module): Linear(in_features=2, out_features=3, bias=True)\n)"
    )
    assert [p is q for p, q in zip(dp.parameters(), inner.parameters())] == [True, True]


def test_jit_decorators(lib):
    def f(x):
        return x * 2

    assert lib.jit.ignore(f) is f and lib.jit.ignore()(f) is f
    with pytest.warns(FutureWarning):
        assert lib.jit.ignore(drop=True)(f) is f
    assert lib.jit.unused(f) is f
    assert lib.jit.is_scripting() is False


def test_compile_script_trace_return_their_argument():
    # PyTorch returns wrappers (OptimizedModule, ScriptFunction); compat returns a module
    # itself (marked to run lazily) and a function wrapped to run lazily, same results
    def f(x):
        return x * 2

    m = ctorch.nn.Linear(2, 2)
    assert ctorch.compile(m) is m
    x = ctorch.ones(1, 2)
    for g in (ctorch.compile(f), ctorch.compile()(f), ctorch.compile(mode="max-autotune")(f)):
        assert g is not f and g.__name__ == "f" and g(x).tolist() == [[2.0, 2.0]]
    assert ctorch.jit.script(f) is f and ctorch.jit.trace(m, ctorch.ones(1, 2)) is m
    with pytest.raises(AssertionError):  # PyTorch's error type for a non-callable
        ctorch.compile(3)


def test_distributed_without_a_run_and_onnx_not_supported(monkeypatch, real_torch):
    dist = ctorch.distributed
    assert dist.is_available() is True and dist.is_initialized() is False
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    for kw in ({}, {"rank": 0, "world_size": 1}):  # env:// without torchrun's variables
        with pytest.raises(ValueError) as ours:
            dist.init_process_group("gloo", **kw)
        with pytest.raises(ValueError) as theirs:
            real_torch.distributed.init_process_group("gloo", **kw)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(NotImplementedError, match=r"torch\.onnx\.export"):
        ctorch.onnx.export(ctorch.nn.Linear(2, 2), (ctorch.ones(1, 2),), "m.onnx")
    with pytest.raises(NotImplementedError):
        ctorch.jit.save(ctorch.nn.Linear(2, 2), "m.pt")
