"""``funcgrad.scipy.spatial.transform``: ``jax.scipy.spatial.transform``'s ``Rotation`` and
``Slerp``.

A :class:`Rotation` holds unit quaternions ``(x, y, z, w)`` (scalar last, as scipy) in its one
field ``quat``, of shape ``(4,)`` for a single rotation or ``(N, 4)`` for a stack. Both classes
are ``NamedTuple``s, hence pytrees: they pass through ``jit``, ``vmap`` and ``grad``. Every
conversion works on the last axis with broadcasting, written with ``funcgrad.numpy``.

    >>> import numpy as np
    >>> from funcgrad.scipy.spatial.transform import Rotation
    >>> r = Rotation.from_rotvec(np.array([0.0, 0.0, np.pi / 2]))
    >>> np.round(np.asarray(r.apply(np.array([1.0, 0.0, 0.0]))), 6).tolist()
    [0.0, 1.0, 0.0]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import random as _random

__all__ = ["Rotation", "Slerp"]

_SMALL = 1e-3  # below this angle, rotation-vector scales use their Taylor series


def _norm(v: Any) -> Any:
    """Euclidean norm over the last axis, with a zero (not NaN) gradient at the origin."""
    sq = fnp.sum(v * v, axis=-1)
    pos = sq > 0
    return fnp.where(pos, fnp.sqrt(fnp.where(pos, sq, 1.0)), 0.0)


def _normalize(q: Any) -> Any:
    return q / _norm(q)[..., None]


def _parts(q: Any) -> tuple[Any, Any, Any, Any]:
    return q[..., 0], q[..., 1], q[..., 2], q[..., 3]


def _compose(p: Any, q: Any) -> Any:
    """Hamilton product ``p q`` of scalar-last quaternions (broadcast over leading axes)."""
    px, py, pz, pw = _parts(p)
    qx, qy, qz, qw = _parts(q)
    return fnp.stack(
        [
            pw * qx + qw * px + (py * qz - pz * qy),
            pw * qy + qw * py + (pz * qx - px * qz),
            pw * qz + qw * pz + (px * qy - py * qx),
            pw * qw - px * qx - py * qy - pz * qz,
        ],
        axis=-1,
    )


def _as_matrix(q: Any) -> Any:
    x, y, z, w = _parts(q)
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    rows = [
        [xx - yy - zz + ww, 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), -xx + yy - zz + ww, 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), -xx - yy + zz + ww],
    ]
    return fnp.stack([fnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m: Any) -> Any:
    """Shepperd's method: build the quaternion from the largest of ``m_00, m_11, m_22`` and
    the trace, which keeps the division well conditioned."""
    m = fnp.asarray(m)
    if m.ndim < 2 or m.shape[-2:] != (3, 3):
        raise ValueError(
            f"Expected `matrix` to have shape (3, 3) or (N, 3, 3), got {tuple(m.shape)}"
        )
    diag = [m[..., i, i] for i in range(3)]
    trace = diag[0] + diag[1] + diag[2]
    choice = fnp.argmax(fnp.stack([*diag, trace], axis=-1), axis=-1)
    result = fnp.stack(
        [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1],
         1 + trace],
        axis=-1,
    )  # fmt: skip
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        comp = [None] * 4
        comp[i] = 1 - trace + 2 * m[..., i, i]
        comp[j] = m[..., j, i] + m[..., i, j]
        comp[k] = m[..., k, i] + m[..., i, k]
        comp[3] = m[..., k, j] - m[..., j, k]
        result = fnp.where((choice == i)[..., None], fnp.stack(comp, axis=-1), result)
    return _normalize(result)


def _safe_angle_scale(angle: Any, small: Any, large_fn: Any) -> Any:
    """``small`` below :data:`_SMALL`, ``large_fn(angle)`` above, with gradients that stay
    finite at zero (the large branch sees a safe angle)."""
    is_small = angle <= _SMALL
    safe = fnp.where(is_small, 1.0, angle)
    return fnp.where(is_small, small, large_fn(safe))


def _from_rotvec(rotvec: Any, degrees: bool) -> Any:
    rotvec = fnp.asarray(rotvec)
    if rotvec.ndim < 1 or rotvec.shape[-1] != 3:
        raise ValueError(
            f"Expected `rot_vec` to have shape (3,) or (N, 3), got {tuple(rotvec.shape)}"
        )
    if degrees:
        rotvec = fnp.deg2rad(rotvec)
    angle = _norm(rotvec)
    a2 = angle * angle
    scale = _safe_angle_scale(angle, 0.5 - a2 / 48 + a2 * a2 / 3840, lambda t: fnp.sin(t / 2) / t)
    return fnp.concatenate([scale[..., None] * rotvec, fnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(q: Any, degrees: bool) -> Any:
    q = fnp.where((q[..., 3] < 0)[..., None], -q, q)  # w >= 0: angle in [0, pi]
    angle = 2.0 * fnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    scale = _safe_angle_scale(angle, 2 + a2 / 12 + 7 * a2 * a2 / 2880, lambda t: t / fnp.sin(t / 2))
    if degrees:
        scale = fnp.rad2deg(scale)
    return scale[..., None] * q[..., :3]


def _from_mrp(mrp: Any) -> Any:
    mrp = fnp.asarray(mrp)
    if mrp.ndim < 1 or mrp.shape[-1] != 3:
        raise ValueError(f"Expected `mrp` to have shape (3,) or (N, 3), got {tuple(mrp.shape)}")
    s = fnp.sum(mrp * mrp, axis=-1) + 1
    return fnp.concatenate([2 * mrp, (2 - s)[..., None]], axis=-1) / s[..., None]


def _as_mrp(q: Any) -> Any:
    sign = fnp.where(q[..., 3] < 0, -1.0, 1.0).astype(q.dtype)
    return sign[..., None] * q[..., :3] / (1.0 + sign * q[..., 3])[..., None]


def _check_seq(seq: str, exactly_three: bool) -> tuple[bool, list[int]]:
    """``(extrinsic, axis indices)`` of an Euler sequence like ``"xyz"`` or ``"ZXZ"``."""
    n = len(seq)
    if exactly_three and n != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if not 1 <= n <= 3:
        raise ValueError(
            f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}"
        )
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(
            f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}"
        )
    if any(seq[i] == seq[i + 1] for i in range(n - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return extrinsic, ["xyz".index(c) for c in seq.lower()]


def _elementary(axis: int, angle: Any) -> Any:
    zero = fnp.zeros_like(angle)
    half = angle / 2
    comps = [zero, zero, zero, fnp.cos(half)]
    comps[axis] = fnp.sin(half)
    return fnp.stack(comps, axis=-1)


def _from_euler(seq: str, angles: Any, degrees: bool) -> Any:
    extrinsic, axes = _check_seq(seq, exactly_three=False)
    angles = fnp.atleast_1d(fnp.asarray(angles))
    if not fnp.issubdtype(angles.dtype, fnp.inexact):
        angles = angles.astype(fnp.result_type(float))
    if angles.shape[-1] not in (1, len(axes)):
        raise ValueError(
            f"Expected angles to have a last axis of size {len(axes)} for seq={seq!r}, "
            f"got shape {tuple(angles.shape)}"
        )
    if degrees:
        angles = fnp.deg2rad(angles)
    pick = (lambda i: angles[..., 0]) if angles.shape[-1] == 1 else (lambda i: angles[..., i])
    result = _elementary(axes[0], pick(0))
    for idx in range(1, len(axes)):
        q = _elementary(axes[idx], pick(idx))
        result = _compose(q, result) if extrinsic else _compose(result, q)
    return result


def _as_euler(q: Any, seq: str, degrees: bool) -> Any:
    """Euler angles by the quaternion method of Bernardes and Viollet (2022)."""
    extrinsic, axes = _check_seq(seq, exactly_three=True)
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    w = q[..., 3]
    if symmetric:
        a, b, c, d = w, q[..., i], q[..., j], q[..., k] * sign
    else:
        a, b = w - q[..., j], q[..., i] + q[..., k] * sign
        c, d = q[..., j] + w, q[..., k] * sign - q[..., i]
    middle = 2 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b))
    eps = 1e-7
    case = fnp.where(fnp.abs(middle) <= eps, 1, fnp.where(fnp.abs(middle - np.pi) <= eps, 2, 0))
    half_sum = fnp.arctan2(b, a)
    half_diff = fnp.arctan2(d, c)
    # gimbal lock (case 1 or 2): the third angle is set to zero, the first takes it all
    degenerate = fnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    regular = case == 0
    # output slots 0 and 2; for an intrinsic sequence the axes were reversed above
    slot0 = fnp.where(regular, half_sum - half_diff if extrinsic else half_sum + half_diff,
                      degenerate)  # fmt: skip
    slot2 = fnp.where(regular, half_sum + half_diff if extrinsic else half_sum - half_diff, 0.0)
    if not symmetric:
        if extrinsic:
            slot2 = slot2 * sign
        else:
            slot0 = slot0 * sign
        middle = middle - np.pi / 2
    angles = fnp.stack([slot0, middle, slot2], axis=-1)
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return fnp.rad2deg(angles) if degrees else angles


def _make_canonical(q: Any) -> Any:
    x, y, z, w = _parts(q)
    neg = (w < 0) | ((w == 0) & (x < 0)) | ((w == 0) & (x == 0) & (y < 0))
    neg = neg | ((w == 0) & (x == 0) & (y == 0) & (z < 0))
    return fnp.where(neg[..., None], -q, q)


def _check_quat(quat: Any) -> Any:
    quat = fnp.asarray(quat)
    if quat.ndim not in (1, 2) or quat.shape[-1] != 4:
        raise ValueError(f"Expected `quat` to have shape (4,) or (N, 4), got {tuple(quat.shape)}.")
    if not fnp.issubdtype(quat.dtype, fnp.inexact):
        quat = quat.astype(fnp.result_type(float))
    return quat


class Rotation(NamedTuple):
    """Rotations in 3 dimensions, as ``jax.scipy.spatial.transform.Rotation``.

    Build one with a ``from_*`` constructor; ``quat`` holds scalar-last unit quaternions of
    shape ``(4,)`` (a single rotation) or ``(N, 4)``.
    """

    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """One stack of the given rotation stacks."""
        return cls(fnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes ``seq`` (``"xyz"``: extrinsic, ``"XYZ"``:
        intrinsic), in radians unless ``degrees``."""
        return cls(_from_euler(seq, angles, degrees))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """From rotation matrices of shape ``(3, 3)`` or ``(N, 3, 3)``."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """From modified Rodrigues parameters ``(3,)`` or ``(N, 3)``."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """From scalar-last quaternions ``(4,)`` or ``(N, 4)``, normalised."""
        return cls(_normalize(_check_quat(quat)))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """From rotation vectors (axis times angle) ``(3,)`` or ``(N, 3)``."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (a stack of ``num`` of them when ``num`` is given)."""
        quat = fnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        if num is not None:
            quat = fnp.tile(quat, (num, 1))
        return cls(quat)

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Rotations drawn uniformly (normalised Gaussian 4-vectors, as scipy)."""

        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(_random.normal(random_key, shape)))

    def __getitem__(self, indexer: Any) -> Rotation:
        """The rotation(s) at ``indexer`` of a stack."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """Number of rotations in a stack."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:  # type: ignore[override]
        """Composition: ``(p * q).apply(v) == p.apply(q.apply(v))``."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """Rotate ``vectors`` (``(3,)`` or ``(N, 3)``), or un-rotate them if ``inverse``."""
        vectors = fnp.asarray(vectors)
        if vectors.ndim < 1 or vectors.shape[-1] != 3:
            raise ValueError(f"Expected input of shape (3,) or (P, 3), got {tuple(vectors.shape)}.")
        m = _as_matrix(self.quat)
        m = fnp.where(inverse, fnp.swapaxes(m, -1, -2), m)
        return fnp.matmul(m, vectors[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles for the 3-axis sequence ``seq`` (see :meth:`from_euler`)."""
        return _as_euler(self.quat, seq, degrees)

    def as_matrix(self) -> Any:
        """Rotation matrices, ``(3, 3)`` or ``(N, 3, 3)``."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Any:
        """Modified Rodrigues parameters (of the rotation's shorter way round)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        """Rotation vectors, angle in ``[0, pi]`` (degrees if ``degrees``)."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions; ``canonical`` picks the sign with ``w >= 0``, ``scalar_first``
        returns ``(w, x, y, z)``."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        if scalar_first:
            return fnp.roll(quat, shift=1, axis=-1)
        return quat

    def inv(self) -> Rotation:
        """The inverse rotation(s) (conjugate quaternions)."""
        return Rotation(fnp.multiply(self.quat, np.array([-1, -1, -1, 1], dtype=self.quat.dtype)))

    def magnitude(self) -> Any:
        """Rotation angles in radians, in ``[0, pi]``."""
        return 2.0 * fnp.arctan2(_norm(self.quat[..., :3]), fnp.abs(self.quat[..., 3]))

    def mean(self, weights: Any | None = None) -> Rotation:
        """The (weighted) mean rotation: the top eigenvector of ``sum w q q^T``."""
        dt = self.quat.dtype
        w = (
            fnp.ones(self.quat.shape[0], dtype=dt)
            if weights is None
            else fnp.asarray(weights, dtype=dt)
        )
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(
                "Expected `weights` to have number of values equal to number of rotations, "
                f"got {w.shape[0]} values and {len(self)} rotations."
            )
        k = fnp.matmul(w[None, :] * self.quat.T, self.quat)
        _, v = fnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation rather than a stack."""
        return self.quat.ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations at increasing key ``times``, as
    ``jax.scipy.spatial.transform.Slerp``; build it with :meth:`Slerp.init`."""

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator through ``rotations`` (at least 2) at ``times`` (1-D)."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = fnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(
                f"Expected times to be specified in a 1 dimensional array, got "
                f"{times.ndim} dimensions."
            )
        if times.shape[0] != len(rotations):
            raise ValueError(
                "Expected number of rotations to be equal to number of timestamps given, "
                f"got {len(rotations)} rotations and {times.shape[0]} timestamps."
            )
        starts = Rotation(rotations.quat[:-1])
        steps = starts.inv() * Rotation(rotations.quat[1:])
        return cls(times, fnp.diff(times), starts, steps.as_rotvec())

    def __call__(self, times: Any) -> Rotation:  # type: ignore[override]
        """The interpolated rotation(s) at ``times`` (scalar or 1-D)."""
        t = fnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = fnp.atleast_1d(t)
        ind = fnp.maximum(fnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if single else result
