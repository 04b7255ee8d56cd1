"""Import swap for conformance runs: ``jax``/``torch`` seen by test code only.

funcgrad runs on JAX's runtime (it imports the real ``jax``), so the swap cannot
replace ``sys.modules['jax']``. Instead ``builtins.__import__`` is wrapped: an
import made *from a swapped module* (the upstream test file, or a shim) of a name
under the swapped root (``jax``, ``torch``) gets an :class:`Alias` of the namesake
module under the target root (``funcgrad``, ``compat.torch``); every other import
(funcgrad's own, numpy's, absl's) is untouched.

Names the target lacks come back as :class:`Missing` placeholders, so a test file
whose top-level ``from jax.errors import X`` names something absent still loads;
each such name is recorded in :data:`TOUCHED` when looked up, and using it raises
:class:`MissingNameError`. Names under the upstream library's private packages
(``jax._src``, ``torch._C``...) that no shim provides are recorded as internals:
the runners list tests that touch them as out of scope (the project mirrors the
public API, not the upstream implementation).
"""

from __future__ import annotations

import builtins
import functools
import importlib
import re
import types
from collections.abc import Callable, Iterable
from typing import Any

#: names looked up by the current test that the target lacks: ``(kind, name)`` with
#: kind ``"missing"`` (a public name) or ``"internal"`` (a private upstream module)
TOUCHED: list[tuple[str, str]] = []

#: set while the test file itself is imported: a missing name called then (a
#: decorator such as ``@jax.numpy_dtype_promotion("standard")``) fails the tests it
#: decorates when they run, instead of the whole file
IMPORTING: list[bool] = [False]


class MissingNameError(AttributeError):
    """A name of the upstream API that the swapped-in library does not have."""


def _record(kind: str, name: str) -> None:
    if (kind, name) not in TOUCHED:
        TOUCHED.append((kind, name))


class Missing:
    """Placeholder for an absent name: importable, but any use raises."""

    def __init__(self, name: str, kind: str, why: str = "") -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_why", why)  # the record for kind "scope"
        # case names built from ``f.__name__`` at import stay those of upstream
        object.__setattr__(self, "__name__", name.rsplit(".", 1)[-1])
        object.__setattr__(self, "__qualname__", name.rsplit(".", 1)[-1])

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        _record(self._kind, self._why or self._name)
        what = {"internal": "an upstream internal", "scope": "out of scope"}.get(
            self._kind, "missing"
        )
        raise MissingNameError(f"{self._name} ({what}: not provided by the swap)")

    # while the test file is imported, uses give deferred placeholders (module-level
    # set-up such as ``p = core.Primitive("p"); p.def_impl(f)`` goes through; the
    # tests that use ``p`` fail when run); once tests run, every use raises
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if attr == "cache_clear":
            # clearing a cache the library does not have (a test's set-up) is vacuous
            return lambda: None
        if IMPORTING[0] or attr.startswith("_"):
            # a private attribute is looked up, not yet used: fail on its use
            return _Deferred(f"{self._name}.{attr}", self._kind, self._why)
        return self._fail()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if IMPORTING[0]:
            return _Deferred(self._name, self._kind, self._why)
        return self._fail()

    def __getitem__(self, key: Any) -> Any:
        if IMPORTING[0]:
            if isinstance(key, int):
                # (Python iterating the placeholder while the file is imported: no items)
                raise IndexError(key)
            return _Deferred(f"{self._name}[…]", self._kind, self._why)
        return self._fail()

    def __setitem__(self, key: Any, value: Any) -> None:
        if not IMPORTING[0]:
            self._fail()

    # (no ``__iter__``: a placeholder is not an ``Iterable``, so a decorator's parameter
    # list holding one, ``parameterized.parameters(lax_linalg._lu_python)``, formats it
    # as one value; iterating it once tests run fails through ``__getitem__``)
    __bool__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = _fail

    # a ``with`` block at import (``with jax.numpy_dtype_promotion("standard"):``
    # while case lists are built) runs its body as it is; in a test, entering fails
    def __enter__(self) -> Any:
        if IMPORTING[0]:
            return _Deferred(self._name, self._kind, self._why)
        return self._fail()

    def __exit__(self, *exc: Any) -> bool:
        return False

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        # ``class T(jax._src.X.Y)`` at module level: make the class, fail on use
        return (_MissingBase,)

    def __repr__(self) -> str:
        return f"<missing {self._name}>"


class _Deferred(Missing):
    """What a missing name returned while the file was imported: as a decorator, it
    makes the decorated test fail (recording the name) when run."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            fn = args[0]
            if isinstance(fn, type):
                return fn

            @functools.wraps(fn)
            def failing(*a: Any, **k: Any) -> Any:
                return self._fail()

            return failing
        return super().__call__(*args, **kwargs)


class _MissingBase:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise MissingNameError("subclass of a missing upstream name")


def _missing_exception(name: str, kind: str) -> type[Exception]:
    """An exception class for a missing exception name (usable in ``except``)."""
    return type(name.rsplit(".", 1)[-1], (Exception,), {"__module__": "missing"})


#: module attributes with dunder names that are public API (the array API standard's, and
#: PyTorch's ``torch.__future__`` and ``torch.__config__`` modules)
_PUBLIC_DUNDERS = frozenset(
    {"__array_namespace_info__", "__array_api_version__", "__future__", "__config__"}
)


class Alias(types.ModuleType):
    """A module of the upstream name space, resolving names in a target module."""

    def __init__(self, name: str, target: types.ModuleType | None, swap: Swap) -> None:
        super().__init__(name)
        self.__dict__["_target"] = target
        self.__dict__["_swap"] = swap
        self.__dict__["__path__"] = []  # a package: submodules may be imported

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__") and attr not in _PUBLIC_DUNDERS:
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        value = self._swap.resolve(full, self._target, attr)
        why = self._swap.scope_of(full)
        if why:
            if isinstance(value, Missing) or (
                isinstance(value, type) and value.__module__ == "missing"
            ):
                # absent by design: every use records the reason (also from decorators
                # applied when the file was imported)
                value = Missing(full, "scope", why)
                self.__dict__[attr] = value
                return value
            _record("scope", why)
            return _scoped(value, why)
        self.__dict__[attr] = value
        return value

    def __setattr__(self, attr: str, value: Any) -> None:
        # rebinding a name the target module has (a test's tear-down resetting a module
        # global, ``nn.modules.module._global_forward_hooks = OrderedDict()``) rebinds it
        # in the target, as it would in the upstream module
        target = self.__dict__.get("_target")
        if target is not None and not attr.startswith("__") and attr in vars(target):
            setattr(target, attr, value)
        super().__setattr__(attr, value)

    def __dir__(self) -> Iterable[str]:
        # the target's public and private names; its module dunders (``__builtins__``...)
        # are not the alias's (``[getattr(jnp, n) for n in dir(jnp)]`` must not fail)
        names = dir(self._target) if self._target is not None else []
        return [n for n in names if not (n.startswith("__") and n.endswith("__"))]


def _scoped(value: Any, why: str) -> Any:
    """``value``, recording ``why`` each time it is called (for module-level imports)."""
    if not callable(value) or isinstance(value, type):
        return value

    @functools.wraps(value)
    def call(*args: Any, **kwargs: Any) -> Any:
        _record("scope", why)
        return value(*args, **kwargs)

    return call


class Swap:
    """Maps one upstream root package onto a target package for chosen importers."""

    def __init__(
        self,
        root: str,
        target: str,
        overrides: dict[str, Callable[[], Any]],
        internal: tuple[str, ...],
        renames: dict[str, str] | None = None,
        scope: dict[str, str] | None = None,
        noops: tuple[str, ...] = (),
        internal_modules: tuple[str, ...] = (),
    ) -> None:
        """``overrides``: upstream module name -> factory of the module to use there
        (shims); ``internal``: upstream package prefixes that are private; ``renames``:
        upstream module name -> target module name where the layout differs; ``scope``:
        public upstream names the target deliberately lacks or differs on (``jax.pmap``,
        ``jax.make_jaxpr``) -> why: a test that looks one up is recorded as out of
        scope, whatever its outcome (a key ``"re:<regex>"`` matches whole names);
        ``noops``: private upstream functions a test's
        set-up or tear-down calls to reset upstream-only state, absent in the target:
        they resolve to a function doing nothing; ``internal_modules``: private upstream
        modules (not packages) among ``internal``, whose lower-case names are functions
        (``torch.utils._device.set_device``), not submodules."""
        self.root = root
        self.target = target
        self.overrides = overrides
        self.internal = internal
        self.renames = renames or {}
        self.scope = scope or {}
        self.noops = noops
        self.internal_modules = internal_modules
        self.importers: set[str] = set()
        self.modules: dict[str, Any] = {}
        self._orig_import: Callable[..., Any] | None = None

    # -- name resolution ------------------------------------------------------
    def _target_name(self, name: str) -> str:
        if name in self.renames:
            return self.renames[name]
        return self.target + name[len(self.root) :]

    def _is_internal(self, name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in self.internal)

    def module(self, name: str) -> Any:
        """The swapped module for upstream module ``name`` (``jax.numpy``)."""
        if name in self.modules:
            return self.modules[name]
        mod: Any
        if name in self.overrides:
            mod = self.overrides[name]()
        else:
            target = None
            try:
                target = importlib.import_module(self._target_name(name))
            except ImportError:
                target = None
            if target is None and not self._is_internal(name):
                _record("missing", name)
            mod = Alias(name, target, self)
        self.modules[name] = mod
        return mod

    def resolve(self, full: str, target: types.ModuleType | None, attr: str) -> Any:
        """Attribute ``attr`` of the alias of ``full``'s parent (``full`` = its name)."""
        if full in self.noops and not (target is not None and hasattr(target, attr)):
            return lambda *args, **kwargs: None
        if full in self.overrides or full in self.renames:
            return self.module(full)
        if target is not None and hasattr(target, attr):
            value = getattr(target, attr)
            if isinstance(value, types.ModuleType) and value.__name__.startswith(self.target):
                if value.__name__ in (self._target_name(full), self.target):
                    # the target's module of that name, or its root re-exported
                    # (``torch.autograd.torch``): the alias of its upstream name
                    return self.module(full if value.__name__ != self.target else self.root)
                return self.module(full)
            return value
        try:
            importlib.import_module(self._target_name(full))
            return self.module(full)
        except ImportError:
            pass
        if self._is_internal(full):
            # a private upstream module under a private package: an empty alias
            if attr[:1].islower() and "." in full and self._looks_like_module(full):
                return self.module(full)
            return self._placeholder(full, "internal")
        return self._placeholder(full, "missing")

    def _looks_like_module(self, full: str) -> bool:
        # jax._src.<mod> and jax._src.<pkg>.<mod>: modules are lower-case names
        # directly under a private package or one level below it
        parts = full.split(".")
        parent = full.rsplit(".", 1)[0]
        if parent in self.internal_modules:
            return False
        return len(parts) <= 4 and parent in self.internal_packages()

    def internal_packages(self) -> set[str]:
        pkgs = set(self.internal)
        for p in self.internal:
            for sub in ("interpreters", "lax", "lib", "random", "numpy", "scipy"):
                pkgs.add(f"{p}.{sub}")
        return pkgs

    def scope_of(self, full: str) -> str:
        """Why ``full`` (or a package above it) is out of scope, or ``""``."""
        for pattern, why in self.scope.items():
            if pattern.startswith("re:") and re.fullmatch(pattern[3:], full):
                return f"{why} ({full})"
        parts = full.split(".")
        for i in range(len(parts), 0, -1):
            why = self.scope.get(".".join(parts[:i]))
            if why:
                return f"{why} ({full})"
        return ""

    def _placeholder(self, full: str, kind: str) -> Any:
        why = self.scope_of(full)
        if why:
            kind = "scope"
        short = full.rsplit(".", 1)[-1]
        if short.endswith(("Error", "Exception", "Warning")):
            _record(kind, why or full)
            return _missing_exception(full, kind)
        return Missing(full, kind, why)

    # -- the import hook ------------------------------------------------------
    def add_importer(self, module_name: str) -> None:
        """Imports made by code of module ``module_name`` see the swapped names."""
        self.importers.add(module_name)

    def install(self) -> None:
        """Wrap ``builtins.__import__`` (once)."""
        if self._orig_import is not None:
            return
        orig = builtins.__import__
        self._orig_import = orig

        def swapped_import(
            name: str,
            globals: dict[str, Any] | None = None,
            locals: Any = None,
            fromlist: Any = (),
            level: int = 0,
        ) -> Any:
            importer = (globals or {}).get("__name__", "")
            if (
                level == 0
                and importer in self.importers
                and (name == self.root or name.startswith(self.root + "."))
            ):
                if fromlist:
                    mod = self.module(name)
                    return mod
                # ``import jax.numpy``: bind the root; make sure the chain exists
                parts = name.split(".")
                for i in range(2, len(parts) + 1):
                    parent = self.module(".".join(parts[: i - 1]))
                    child = self.module(".".join(parts[:i]))
                    if isinstance(parent, Alias):
                        parent.__dict__[parts[i - 1]] = child
                return self.module(self.root)
            return orig(name, globals, locals, fromlist, level)

        builtins.__import__ = swapped_import
