"""``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells, as ``torch/nn/modules/rnn.py``.

Parameter names, shapes, registration order and default initialisation (uniform on
``±1/sqrt(hidden_size)``) are PyTorch's, so ``state_dict``s load either way. Each
layer-direction runs as one compat op whose body is a single ``funcgrad.lax.scan``
over the time steps, and the whole stack (layers, directions, dropout between
layers while training) is one compat op (``compat.torch.nn._rnn``): one compiled
program and one recorded node per forward call. ``PackedSequence`` data is gathered
into a time-major padded batch inside that op, the scans mask the steps past each
sequence's length, and the output is packed again; the final states are those at
each sequence's true length.

Example:
    >>> import compat.torch as torch
    >>> lstm = torch.nn.LSTM(4, 8, num_layers=2, batch_first=True, bidirectional=True)
    >>> out, (h, c) = lstm(torch.randn(3, 5, 4))
    >>> out.shape, h.shape
    (torch.Size([3, 5, 16]), torch.Size([4, 3, 8]))
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import compat.torch as torch
from compat.torch.nn import _rnn, init
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter
from compat.torch.nn.utils.rnn import PackedSequence, _int64, _packing

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

Tensor = Any

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _empty(shape: tuple[int, ...], dtype: Any) -> Tensor:
    return torch.empty(shape) if dtype is None else torch.empty(shape, dtype=dtype)


def _size(t: Tensor) -> tuple[int, ...]:
    return tuple(int(n) for n in t.shape)


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: arguments, parameters, checks, the
    layer loop (``mode`` is ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``)."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability "
                "of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        for name, value, kind in (
            ("bias", bias, bool),
            ("batch_first", batch_first, bool),
            ("input_size", input_size, int),
        ):
            if not isinstance(value, kind):
                raise TypeError(
                    f"{name} should be of type {kind.__name__}, got: {type(value).__name__}"
                )
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, real_hidden)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for stem, shape in shapes:
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_empty(shape, dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters per layer-direction, in PyTorch's order."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch compacts cuDNN weights here; compat has nothing to compact)."""

    def reset_parameters(self) -> None:
        """Draw every parameter uniformly on ``±1/sqrt(hidden_size)``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- checks -------------------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({weight_dtype}). Convert input: input.to({weight_dtype}), or convert "
                f"model: model.to({input.dtype})"
            )
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]}"
            )

    def _batch(self, input: Tensor, batch_sizes: Tensor | None) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return int(input.shape[0] if self.batch_first else input.shape[1])

    def get_expected_hidden_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, self._batch(input, batch_sizes), size)

    def check_hidden_size(
        self,
        hx: Tensor,
        expected_hidden_size: tuple[int, int, int],
        msg: str = "Expected hidden size {}, got {}",
    ) -> None:
        if _size(hx) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(_size(hx))))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    # -- forward ------------------------------------------------------------------

    def _zeros(self, input: Tensor, batch: int, size: int) -> Tensor:
        directions = 2 if self.bidirectional else 1
        return torch.zeros(
            self.num_layers * directions, batch, size, dtype=input.dtype, device=input.device
        )

    def _initial(self, input: Tensor, batch: int) -> Any:
        """Zero initial state(s) for ``batch`` sequences."""
        if self.mode == "LSTM":
            real = self.proj_size if self.proj_size > 0 else self.hidden_size
            return (self._zeros(input, batch, real), self._zeros(input, batch, self.hidden_size))
        return self._zeros(input, batch, self.hidden_size)

    def _unbatched_hidden(self, hx: Any, batched: bool) -> Any:
        """PyTorch's dimension checks of ``hx`` against the input's batchedness."""
        lstm = self.mode == "LSTM"
        dims = tuple(h.dim() for h in hx) if lstm else (hx.dim(),)
        want = 3 if batched else 2
        if all(d == want for d in dims):
            if batched:
                return hx
            return tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if lstm:
            raise RuntimeError(
                f"For {kind} input, hx and cx should also be {want}-D but got "
                f"({dims[0]}-D, {dims[1]}-D) tensors"
            )
        raise RuntimeError(
            f"For {kind} input, hx should also be {want}-D but got {dims[0]}-D tensor"
        )

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        """Run the stack over ``input`` (a tensor or a ``PackedSequence``) from ``hx``
        (zeros when ``None``); returns ``(output, h_n)`` or, for LSTM, ``(output, (h_n, c_n))``."""
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._initial(data, int(batch_sizes[0]))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            x = data
            packing = _packing(_int64(batch_sizes))
        else:
            if input.dim() not in (2, 3):
                label = "RNN" if self.mode.startswith("RNN") else self.mode
                tail = " tensor" if label == "RNN" else ""
                raise ValueError(
                    f"{label}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead"
                )
            batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
            if hx is None:
                hx = self._initial(input, self._batch(input, None))
            else:
                hx = self._unbatched_hidden(hx, batched)
            self.check_forward_args(input, hx, None)
            if input.shape[1 if self.batch_first else 0] == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            x = input
            packing = ()
        out, hidden = self._run(x, hx, packing)
        if packed:
            out = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
            return out, self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            out = out.squeeze(batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        return out, hidden

    def _run(self, x: Tensor, hx: Any, packing: tuple[Any, ...]) -> tuple[Tensor, Any]:
        """The whole stack as one op; dropout draws come from compat's generator."""
        directions = 2 if self.bidirectional else 1
        config = dict(
            layers=self.num_layers,
            directions=directions,
            bias=self.bias,
            proj=self.proj_size > 0,
            batch_first=self.batch_first,
        )
        draws = None
        if self.dropout and self.training and self.num_layers > 1:
            features = directions * (self.proj_size or self.hidden_size)
            if packing:  # PyTorch drops elements of each layer's packed output
                shape: tuple[int, ...] = (x.shape[0], features)
            elif self.batch_first:
                shape = (x.shape[1], x.shape[0], features)
            else:
                shape = (x.shape[0], x.shape[1], features)
            # as PyTorch's stack draws them: after each layer but the last, one
            # ``bernoulli_(1 - p)`` over the layer's output (none when p == 1); stored as
            # 0 where kept, 1 where dropped, so that ``draws < 1 - p`` is the mask
            with torch.no_grad():
                if self.dropout < 1:
                    keep = 1.0 - self.dropout
                    masks = [
                        1.0 - torch.empty(shape, dtype=x.dtype, device=x.device).bernoulli_(keep)
                        for _ in range(self.num_layers - 1)
                    ]
                    draws = torch.stack(masks)
                else:
                    draws = torch.ones(
                        (self.num_layers - 1, *shape), dtype=x.dtype, device=x.device
                    )
        res = _rnn.stack(
            self.mode, x, hx, self._flat_weights, config, packing, draws, 1.0 - self.dropout
        )
        return res[0], ((res[1], res[2]) if self.mode == "LSTM" else res[1])

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` with
    ``nonlinearity`` ``'tanh'`` (default) or ``'relu'``.

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, gates ``(i, f, g, o)``; ``proj_size > 0`` projects
    ``h_t`` with ``weight_hr_l{k}`` (shape ``(proj_size, hidden_size)``).

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)``;
    ``forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, self._batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )


class GRU(RNNBase):
    """Gated recurrent unit, gates ``(r, z, n)``:
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    Same arguments as ``RNN`` without ``nonlinearity``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---------------------------------------------------------------------------
# cells
# ---------------------------------------------------------------------------


class RNNCellBase(Module):
    """What the cells share: ``weight_ih``/``weight_hh`` (``(chunks * hidden, in)``,
    ``(chunks * hidden, hidden)``), optional ``bias_ih``/``bias_hh``, the init."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(_empty((gates, input_size), dtype))
        self.weight_hh = Parameter(_empty((gates, hidden_size), dtype))
        if bias:
            self.bias_ih = Parameter(_empty((gates,), dtype))
            self.bias_hh = Parameter(_empty((gates,), dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Draw every parameter uniformly on ``±1/sqrt(hidden_size)``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, mode: str, input: Tensor, states: tuple[Tensor | None, ...]) -> Any:
        """Checks as PyTorch's cell kernels, unbatched handling, then one op."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, s in enumerate(states):
            if s is not None and s.dim() not in (1, 2):
                what = f"hx[{i}]" if mode == "LSTM" else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        batch = int(input.shape[0])
        full = []
        for s in states:
            if s is None:
                s = torch.zeros(batch, self.hidden_size, dtype=input.dtype, device=input.device)
            elif not batched:
                s = s.unsqueeze(0)
            full.append(s)
        if input.shape[1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} expected "
                f"{self.input_size}"
            )
        for i, s in enumerate(full):
            if s.shape[0] != batch:
                raise RuntimeError(
                    f"Input batch size {batch} doesn't match hidden{i} batch size {s.shape[0]}"
                )
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, expected "
                    f"{self.hidden_size}"
                )
        for t in (self.weight_ih, *full):
            if t.dtype != input.dtype:
                raise RuntimeError(
                    "mat1 and mat2 must have the same dtype, but got "
                    f"{_scalar_name(input.dtype)} and {_scalar_name(t.dtype)}"
                )
        weights = (self.weight_ih, self.weight_hh)
        if self.bias:
            weights += (self.bias_ih, self.bias_hh)
        c = full[1] if mode == "LSTM" else None
        out = _rnn.cell(mode, input, full[0], c, weights, self.bias)
        if batched:
            return out
        return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)


def _scalar_name(dtype: Any) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}.get(
        str(dtype).removeprefix("torch."), str(dtype)
    )


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._step(mode, input, (hx,))


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c')`` from ``input`` and ``(h, c)`` (zeros when ``None``)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        return self._step("LSTM", input, (None, None) if hx is None else tuple(hx))


class GRUCell(RNNCellBase):
    """One GRU step: ``h'`` from ``input`` and ``h`` (zeros when ``None``)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("GRU", input, (hx,))
