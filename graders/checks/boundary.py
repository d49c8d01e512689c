"""The allowlist, walked: which of its callables run the student's code or strings somewhere the checker
cannot follow, reach torch's JIT, dispatcher, files or global settings, or iterate in Python.

The checked subset admits whole modules (graders.checks.library). Some of their callables would carry a
submission out of it: ``typing.get_type_hints`` evaluates string annotations, ``torch.load`` unpickles,
``torch.cond``/``torch.while_loop`` run their functions through ``torch.compile``, ``register_forward_hook``
puts student code inside torch's own machinery, a ``__torch_function__`` class intercepts every torch call
the worker makes on its objects. Each is listed here with what it does; everything listed is a finding
of kind "outside" (it costs "vectorized" and "fast"), except the higher-order calls that only iterate,
which are "iteration". ``tests/test_static_boundary.py`` walks the modules again and fails on any
callable that takes a function and is in none of these tables, so a new one in a torch upgrade is reviewed.
"""
from __future__ import annotations

import functools
import importlib
import re
import types

from graders.checks.finding import ITERATION, OUTSIDE
from graders.checks.library import ALLOWED_MODULES, UNKNOWN, library_object

STRINGS = "it evaluates strings as code, which the checker cannot read"
FILES = "it reads or writes files or pickles, which runs code outside the checked subset"
JIT = "it runs code through torch.compile, the JIT or the dispatcher, outside the checked subset"
TORCH_FUNCTION = "it hooks your code into torch's own dispatch, which the grader's machinery runs on"
SETTINGS = "it changes torch's global settings or threads, which grading relies on"
HOOK = "a hook runs your code inside torch's machinery, outside the call being graded"
MODULES = "it hands out modules outside the checked subset"
REFLECTION = "reflection is not allowed in the code an exercise reaches"

# library callables outside the subset, by qualified name (resolved to the object: any alias is caught)
OUTSIDE_CALLABLES: dict[str, str] = {
    "typing.get_type_hints": STRINGS, "typing.ForwardRef": STRINGS,
    "torch.load": FILES, "torch.save": FILES, "torch.from_file": FILES, "torch.get_file_path": FILES,
    "torch.cond": JIT, "torch.while_loop": JIT + ", and repeats its body in Python",
    "torch.fork": JIT, "torch.wait": JIT, "torch.import_ir_module": JIT, "torch.import_ir_module_from_buffer": JIT,
    "torch.parse_ir": JIT, "torch.parse_schema": JIT, "torch.parse_type_comment": JIT,
    "torch.merge_type_from_type_comment": JIT, "torch.unify_type_list": JIT,
    "torch.get_device_module": MODULES,
    "torch.init_num_threads": SETTINGS, "torch.prepare_multiprocessing_environment": SETTINGS,
    "torch.autocast_increment_nesting": SETTINGS, "torch.autocast_decrement_nesting": SETTINGS,
    "torch.clear_autocast_cache": SETTINGS, "torch.seed": SETTINGS,
    "torch.nn.functional.handle_torch_function": TORCH_FUNCTION,
    "torch.nn.functional.has_torch_function": TORCH_FUNCTION,
    "torch.nn.functional.has_torch_function_unary": TORCH_FUNCTION,
    "torch.nn.functional.has_torch_function_variadic": TORCH_FUNCTION,
    "torch.nn.functional.boolean_dispatch": TORCH_FUNCTION,
}
SETTERS_OK = {"set_printoptions", "set_grad_enabled"}  # torch.set_* that change nothing grading relies on
# torch's classes that are data or plain context managers; every other torch class (the JIT's ScriptModule,
# Graph, FileCheck, the dispatcher's DispatchKey and ExcludeDispatchKeyGuard, DisableTorchFunction, storages,
# file readers and writers, Future, Stream ...) is outside the subset
SAFE_TORCH_CLASSES = {
    "torch.Tensor", "torch.Size", "torch.device", "torch.dtype", "torch.finfo", "torch.iinfo", "torch.layout",
    "torch.memory_format", "torch.qscheme", "torch.Generator", "torch.no_grad", "torch.enable_grad",
    "torch.inference_mode", "torch.set_grad_enabled", "torch.autocast", "torch.SymInt", "torch.SymFloat",
    "torch.SymBool", "torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.UninitializedParameter",
    "torch.nn.UninitializedBuffer",
}
# higher-order library calls that only iterate: "vectorized" is lost, the timing stays trustworthy
ITERATING_CALLABLES: dict[str, str] = {
    "einops.asnumpy": "`einops.asnumpy` leaves tensor land",
}
# callables of the allowlist that take a function, or whose own code calls eval/exec/compile/open/import/
# pickle/torch.compile, and that stay inside the subset: each with the reason (the walk test reads this)
REVIEWED: dict[str, str] = {
    "torch.vmap": "runs the function once, on batched tensors (its code is checked like any other)",
    "torch.func.vmap": "the same function as torch.vmap",
    "torch.no_grad": "a decorator: runs the function once with gradients off",
    "torch.enable_grad": "a decorator: runs the function once with gradients on",
    "torch.inference_mode": "a decorator: runs the function once in inference mode",
    "torch.set_grad_enabled": "a decorator: runs the function once",
    "torch.autocast": "a decorator: runs the function once under autocast",
    "torch.classproperty": "wraps a class's own function as a property",
    "typing.final": "returns the function unchanged", "typing.abstractmethod": "marks the function, returns it",
    "typing.overload": "records the signature, returns a stub", "einops.einops.overload": "typing.overload",
    "typing.get_overloads": "reads the signatures typing.overload recorded",
    "einops.reduce": "calls a custom reduction once, on the whole tensor",
    "einops.einops.reduce": "the same function as einops.reduce",
    "einops.layers.torch.Reduce": "calls a custom reduction once per forward, on the whole tensor",
    "torch.nn.TripletMarginWithDistanceLoss": "calls distance_function once per forward, on whole tensors",
    "torch.nn.functional.triplet_margin_with_distance_loss": "calls distance_function once, on whole tensors",
    "torch.nn.functional.interpolate": "imports torch's own decompositions by a fixed name (deterministic CUDA)",
    "torch.nn.functional.pad": "imports torch's own decompositions by a fixed name (deterministic CUDA)",
    "torch.nn.functional.max_pool3d_with_indices": "imports torch's own decompositions by a fixed name (CUDA)",
    "torch.nn.Module": "its methods are walked one by one (`compile` and the hooks are findings by name)",
    "torch.nn.Module.load_state_dict": "calls a local helper named `load` (not torch.load); no files",
}

# attribute names that leave the subset on ANY object (the receiver's type is not known statically)
OUTSIDE_ATTRIBUTES: dict[str, str] = {
    "as_subclass": TORCH_FUNCTION, "module_load": TORCH_FUNCTION,
    "share_memory_": "it moves the tensor to shared memory through torch.multiprocessing",
    "share_memory": "it moves the tensors to shared memory through torch.multiprocessing",
    "from_file": FILES,
}
HOOK_ATTRIBUTE = re.compile(r"^register_\w*hook")  # register_hook, register_forward_pre_hook, register_prehook ...
# attribute names that iterate on any object, unless one of the student's own classes defines the name
ITERATING_ATTRIBUTES: dict[str, str] = {
    "apply": "`Module.apply` calls Python code once per submodule",
}
# methods a class body may not define: each makes the interpreter or torch call the student's code from
# inside their own machinery (dispatch, pickling, class creation, garbage collection, array conversion)
HOOK_DUNDERS: dict[str, str] = {
    "__torch_function__": TORCH_FUNCTION, "__torch_dispatch__": TORCH_FUNCTION,
    "__reduce__": FILES, "__reduce_ex__": FILES, "__getstate__": FILES, "__setstate__": FILES,
    "__init_subclass__": "it runs when a class is created", "__class_getitem__": "it runs when a class is indexed",
    "__set_name__": "it runs when a class is created", "__prepare__": "it runs when a class is created",
    "__instancecheck__": "it changes what isinstance says", "__subclasscheck__": "it changes what issubclass says",
    "__getattribute__": "it intercepts every attribute access", "__del__": "it runs when the garbage collector "
    "decides, inside whatever the process is doing", "__array__": "numpy and torch call it to convert the object",
    "__array_function__": "numpy calls it", "__array_ufunc__": "numpy calls it",
    "__dlpack__": "torch calls it to convert the object", "__dlpack_device__": "torch calls it to convert the object",
}


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[int, tuple[str, str]], frozenset[int]]:
    """The listed callables by object identity (so ``F.torch.load`` or an alias is the same object), and the
    safe torch classes by identity."""
    by_id: dict[int, tuple[str, str]] = {}
    for qual, why in OUTSIDE_CALLABLES.items():
        obj = library_object(qual)
        if obj is not UNKNOWN:
            by_id[id(obj)] = (OUTSIDE, why)
    for qual, why in ITERATING_CALLABLES.items():
        obj = library_object(qual)
        if obj is not UNKNOWN:
            by_id[id(obj)] = (ITERATION, why)
    safe = {id(library_object(q)) for q in SAFE_TORCH_CLASSES}
    return by_id, frozenset(safe)


def _torch_class(obj) -> bool:
    return isinstance(obj, type) and (getattr(obj, "__module__", "") or "").split(".")[0] == "torch"


def classify(qual: str, obj) -> tuple[str, str] | None:
    """(kind, why) when the library object ``obj`` (reached as ``qual``) carries code out of the subset or
    iterates; None when it is an ordinary part of the subset."""
    import torch  # noqa: PLC0415  (lazy: only when checking, like every library lookup)
    by_id, safe = _tables()
    if id(obj) in by_id:
        return by_id[id(obj)]
    name = qual.rsplit(".", 1)[-1]
    if qual.split(".")[0] == "torch" and name.startswith("set_") and name not in SETTERS_OK and callable(obj):
        return OUTSIDE, SETTINGS
    if _torch_class(obj) and id(obj) not in safe and not type(obj).__name__ == "tensortype" \
            and not issubclass(obj, (torch.nn.Module, BaseException)):
        return OUTSIDE, JIT
    return None


def _public_names():
    """(module, name, object) of every public attribute of the allowed modules."""
    for module in sorted(ALLOWED_MODULES - {"__future__"}):
        m = importlib.import_module(module)
        for name in dir(m):
            if not name.startswith("_"):
                yield module, name, getattr(m, name, None)


@functools.lru_cache(maxsize=1)
def outside_names() -> dict[str, tuple[str, str]]:
    """Names under which an allowed module exposes something this table puts outside the subset (``load``,
    ``cond``, ``ScriptModule``, ``set_flush_denormal`` ...), with their (kind, why): read on an object whose
    origin the checker cannot follow (``(torch,)[0].load``, a parameter whose default is ``torch``), they are
    findings too, so a container or a parameter cannot hide them. Tensor and nn.Module attributes are not."""
    import torch  # noqa: PLC0415  (lazy: only when checking)
    found: dict[str, tuple[str, str]] = {}
    for module, name, obj in _public_names():
        rule = classify(f"{module}.{name}", obj) if obj is not None else None
        if rule:
            found.setdefault(name, rule)
    return {n: r for n, r in found.items() if n not in set(dir(torch.Tensor)) | set(dir(torch.nn.Module))}


@functools.lru_cache(maxsize=1)
def library_names() -> frozenset[str]:
    """Every public name of the allowed modules, of Tensor and of nn.Module: what an assignment to an attribute of
    an object of unknown origin (``m.relu = f`` with ``m`` a parameter) would replace in the library."""
    import torch  # noqa: PLC0415  (lazy: only when checking)
    names = {name for _, name, _ in _public_names()}
    return frozenset(names | {n for n in dir(torch.Tensor) + dir(torch.nn.Module) if not n.startswith("_")})


def is_tensor_class(obj) -> bool:
    """A library class whose subclasses are Tensor subclasses (``torch.Tensor``, ``nn.Parameter``)."""
    import torch  # noqa: PLC0415  (lazy: only when checking)
    return isinstance(obj, type) and issubclass(obj, torch.Tensor)


def attribute_rule(attr: str) -> tuple[str, str] | None:
    """(kind, why) for an attribute name that leaves the subset on any object."""
    if attr in OUTSIDE_ATTRIBUTES:
        return OUTSIDE, OUTSIDE_ATTRIBUTES[attr]
    if HOOK_ATTRIBUTE.match(attr):
        return OUTSIDE, HOOK
    return None


def plain_class_base(obj) -> bool:
    """A library base class a student class may extend: not a Tensor class, not a metaclass, not a module."""
    return obj is not UNKNOWN and isinstance(obj, type) and not is_tensor_class(obj) and not issubclass(obj, type) \
        or callable(getattr(obj, "__mro_entries__", None)) and not isinstance(obj, types.ModuleType)
