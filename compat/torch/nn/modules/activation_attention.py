"""``nn.MultiheadAttention`` (PyTorch keeps it in ``torch/nn/modules/activation.py``).

Parameter names, shapes, registration order and initialisation follow PyTorch,
so ``state_dict``s move between the two: ``in_proj_weight`` ``(3E, E)`` and
``in_proj_bias`` ``(3E,)`` when query, key and value share ``embed_dim``;
``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` when ``kdim``/``vdim``
differ; ``bias_k``/``bias_v`` ``(1, 1, E)`` with ``add_bias_kv``; ``out_proj``
a ``Linear(E, E)``.
"""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.nn import init
from compat.torch.nn.functional.attention import multi_head_attention_forward
from compat.torch.nn.modules.linear import NonDynamicallyQuantizableLinear
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


def _empty(shape: tuple[int, ...], dtype: Any) -> Any:
    return torch.empty(shape) if dtype is None else torch.empty(shape, dtype=dtype)


class MultiheadAttention(Module):
    """Attention from ``query`` to ``key``/``value`` with ``num_heads`` parallel heads.

    Inputs are ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``) or unbatched
    ``(L, E)``; ``forward`` returns ``(attn_output, attn_weights)``. Boolean
    masks mark positions to IGNORE (``True`` = masked).

    Example:
        >>> import compat.torch as torch
        >>> mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = torch.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> tuple(out.shape), tuple(w.shape)
        ((3, 5, 8), (3, 5, 5))
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_empty((embed_dim, embed_dim), dtype))
            self.k_proj_weight = Parameter(_empty((embed_dim, self.kdim), dtype))
            self.v_proj_weight = Parameter(_empty((embed_dim, self.vdim), dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_empty((3 * embed_dim, embed_dim), dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty((3 * embed_dim,), dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = Parameter(_empty((1, 1, embed_dim), dtype))
            self.bias_v = Parameter(_empty((1, 1, embed_dim), dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Any,
        key: Any,
        value: Any,
        key_padding_mask: Any = None,
        need_weights: bool = True,
        attn_mask: Any = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Any, Any]:
        """``(attn_output, attn_weights)``; weights are ``None`` unless ``need_weights``."""
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
