"""Seed templates: placeholder analysis, syntax checks and sandboxed rendering (pure: no Django).

Seed values are Jinja2 templates written by whoever made the dataset, so they are untrusted.
Rendering therefore happens only in Jinja2's :class:`~jinja2.sandbox.SandboxedEnvironment`,
hardened further here, and in a short-lived child process:

* the sandbox blocks ``__class__`` / ``__globals__`` / ``__subclasses__`` walks; on top of it
  only an allow-list of filters, globals and ``str``/``list``/``dict`` methods is reachable,
  ``range`` is capped, ``*``, ``**``, ``+`` and ``%`` are intercepted and refuse results larger
  than the output limit before they are built;
* the child (``python -I`` this file) gets the template and values on stdin, an empty
  environment (no secrets), a CPU-time, address-space and file-size limit, and is killed after
  a wall-clock timeout; it streams the output and stops at the size limit.

PyRIT itself renders with a plain (unsandboxed) ``Environment`` at load time; Redline never
does (contract §12). Analysis and syntax checks only parse, which is safe in process.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, meta, nodes
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.runtime import LoopContext
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import Namespace

#: Characters a rendered preview may have.
MAX_OUTPUT = 100_000
#: Wall-clock seconds a render may take (child start-up included).
TIMEOUT = 5.0
#: CPU seconds the child may use.
CPU_SECONDS = 2
#: Address space of the child, bytes: enough for Python and Jinja2, far from exhausting a server.
MEMORY_BYTES = 512 * 1024 * 1024
#: Items ``range()`` may produce inside a template.
MAX_RANGE = 10_000
#: Longest value accepted for one parameter, characters.
MAX_VALUE = 20_000

#: Variables PyRIT fills in at YAML load time (``{{ datasets_path }}``…); kept verbatim here.
PYRIT_PATH_VARIABLES = frozenset(
    {
        "datasets_path",
        "pyrit_path",
        "pyrit_home_path",
        "jailbreak_templates_path",
        "db_data_path",
        "log_path",
        "docs_code_path",
        "docs_path",
        "content_classifiers_path",
        "likert_scales_path",
        "scales_path",
        "score_prompts_path",
        "red_teaming_path",
        "executors_path",
        "converter_seed_prompts_path",
        "scorer_content_classifiers_path",
        "scorer_likert_path",
        "scorer_scales_path",
        "scorer_seed_prompts_path",
    }
)

_TEMPLATE_MARK = re.compile(r"\{\{|\{%|\{#")

# --- the hardened sandbox -----------------------------------------------------------------------

_STR_METHODS = frozenset(
    {
        "capitalize",
        "casefold",
        "count",
        "endswith",
        "find",
        "isalnum",
        "isalpha",
        "isdigit",
        "islower",
        "isspace",
        "istitle",
        "isupper",
        "lower",
        "lstrip",
        "rfind",
        "rsplit",
        "rstrip",
        "split",
        "splitlines",
        "startswith",
        "strip",
        "swapcase",
        "title",
        "upper",
    }
)
_LIST_METHODS = frozenset({"count", "index"})
_DICT_METHODS = frozenset({"get", "items", "keys", "values"})

#: Filters whose output is proportional to their input (no size or count argument).
_PLAIN_FILTERS = (
    "abs",
    "capitalize",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "forceescape",
    "int",
    "items",
    "last",
    "length",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "reject",
    "rejectattr",
    "reverse",
    "round",
    "select",
    "selectattr",
    "sort",
    "string",
    "striptags",
    "sum",
    "title",
    "tojson",
    "trim",
    "truncate",
    "unique",
    "upper",
    "urlencode",
    "wordcount",
    "wordwrap",
)


def _size(value: Any) -> int:
    """A cheap upper bound of the text ``value`` turns into (sequences: their length)."""
    if isinstance(value, str | bytes | list | tuple):
        return len(value)
    return 0


def _refuse(message: str) -> SecurityError:
    return SecurityError(message)


class LimitedSandbox(SandboxedEnvironment):
    """A :class:`SandboxedEnvironment` that cannot be made to allocate or loop without bound.

    Reachable attributes are an allow-list per type; operators that multiply sizes check the
    size of their result before building it.
    """

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *, max_output: int = MAX_OUTPUT, **kwargs: Any) -> None:
        kwargs.setdefault("undefined", StrictUndefined)
        kwargs.setdefault("autoescape", False)
        kwargs.setdefault("keep_trailing_newline", True)
        super().__init__(**kwargs)
        self.max_output = max_output
        builtin = self.filters
        filters: dict[str, Any] = {name: builtin[name] for name in _PLAIN_FILTERS}
        filters.update(
            {
                "join": self._join,
                "replace": self._replace,
                "center": self._center,
                "indent": self._indent,
                "batch": self._batch,
                "slice": self._slice,
            }
        )
        self.filters = filters
        # No lipsum (unbounded text), cycler/joiner (classic SSTI pivots, never needed here).
        self.globals = {"range": self._range, "dict": dict, "namespace": self.globals["namespace"]}

    # attributes -------------------------------------------------------------------------------

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value):
            return False
        if isinstance(obj, str):
            return attr in _STR_METHODS
        if isinstance(obj, list | tuple):
            return attr in _LIST_METHODS
        if isinstance(obj, dict):
            return attr in _DICT_METHODS
        # Jinja's own runtime objects (loop variables, namespaces); nothing else.
        return isinstance(obj, LoopContext | Namespace)

    def wrap_str_format(self, value: Any) -> None:
        # No str.format / format_map at all: field widths ("{:>999999999}") allocate unchecked.
        return None

    # operators --------------------------------------------------------------------------------

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(times, int) and _size(seq) * max(times, 0) > self.max_output:
                    raise _refuse("a repetition that large is not allowed")
        elif operator == "**":
            if isinstance(right, int | float) and isinstance(left, int | float):
                magnitude = abs(left)
                if right > 0 and magnitude > 1 and right * math.log2(magnitude) > 4096:
                    raise _refuse("a power that large is not allowed")
        elif operator == "+":
            if _size(left) + _size(right) > self.max_output:
                raise _refuse("a concatenation that long is not allowed")
        elif operator == "%" and isinstance(left, str):
            # printf-style widths ("%099999999d") allocate before anything can check them.
            raise _refuse("%-formatting of strings is not allowed")
        return super().call_binop(context, operator, left, right)

    # size-checked globals and filters ---------------------------------------------------------

    def _range(self, *args: int) -> range:
        rng = range(*args)
        if len(rng) > MAX_RANGE:
            raise _refuse(f"range() is limited to {MAX_RANGE} items")
        return rng

    def _check(self, size: int, what: str) -> None:
        if size > self.max_output:
            raise _refuse(f"{what} would exceed {self.max_output} characters")

    def _join(self, value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
        items = list(value)
        if attribute is not None:
            items = [self.getattr(item, attribute) for item in items]
        texts = [str(item) for item in items]
        self._check(sum(map(len, texts)) + len(d) * len(texts), "join")
        return str(d).join(texts)

    def _replace(self, s: Any, old: str, new: str, count: int | None = None) -> str:
        s, old, new = str(s), str(old), str(new)
        hits = s.count(old) if count is None else min(count, s.count(old))
        if old == "":
            hits = len(s) + 1 if count is None else min(count, len(s) + 1)
        self._check(len(s) + hits * max(len(new) - len(old), 0), "replace")
        return s.replace(old, new) if count is None else s.replace(old, new, count)

    def _center(self, value: Any, width: int = 80) -> str:
        self._check(int(width), "center")
        return str(value).center(int(width))

    def _indent(
        self, s: Any, width: int | str = 4, first: bool = False, blank: bool = False
    ) -> str:
        text = str(s)
        pad = len(width) if isinstance(width, str) else int(width)
        self._check(len(text) + pad * (text.count("\n") + 1), "indent")
        return self.filters_builtin("indent")(text, width, first, blank)

    def _batch(self, value: Iterable[Any], linecount: int, fill_with: Any = None) -> list:
        items = list(value)
        if int(linecount) > len(items) + 1 and fill_with is not None:
            self._check(int(linecount), "batch")
        return list(self.filters_builtin("batch")(items, linecount, fill_with))

    def _slice(self, value: Iterable[Any], slices: int, fill_with: Any = None) -> list:
        if int(slices) > MAX_RANGE:
            raise _refuse(f"slice() is limited to {MAX_RANGE} slices")
        return list(self.filters_builtin("slice")(value, slices, fill_with))

    @staticmethod
    def filters_builtin(name: str) -> Any:
        from jinja2.filters import FILTERS

        return FILTERS[name]


# --- analysis (in process: parsing only) --------------------------------------------------------


@dataclass(frozen=True)
class TemplateReport:
    """What a seed value uses as a template, checked against its declared ``parameters``."""

    is_template: bool
    syntax_error: str | None = None
    used: tuple[str, ...] = ()
    undeclared: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    path_variables: tuple[str, ...] = ()

    @property
    def warnings(self) -> list[str]:
        """Human-readable warnings (never errors: PyRIT accepts both cases)."""
        out = []
        if self.undeclared:
            names = ", ".join(self.undeclared)
            out.append(f"placeholders used but not declared in parameters: {names}")
        if self.unused:
            out.append(f"parameters declared but not used: {', '.join(self.unused)}")
        return out


def looks_like_template(value: str) -> bool:
    """True when ``value`` has Jinja2 markup (``{{``, ``{%`` or ``{#``)."""
    return bool(_TEMPLATE_MARK.search(value))


def syntax_error(value: str) -> str | None:
    """The template syntax error of ``value`` ("line 3: unexpected '}'"), or None."""
    try:
        # Compiling (not running) also catches unknown filters and tests.
        LimitedSandbox().compile(value)
    except TemplateSyntaxError as exc:
        return f"line {exc.lineno}: {exc.message}"
    except (RecursionError, MemoryError):
        return "the template is nested too deeply"
    return None


def _used_names(value: str) -> set[str]:
    ast = LimitedSandbox().parse(value)
    names = set(meta.find_undeclared_variables(ast))
    # ``{% set x = ... %}`` at top level is assigned, not read from the context.
    names -= {n.name for n in ast.find_all(nodes.Name) if n.ctx == "store"}
    return names


def analyse(value: str, parameters: Sequence[str] = ()) -> TemplateReport:
    """Placeholders ``value`` reads, compared with the declared ``parameters``.

    PyRIT's path variables (``{{ datasets_path }}``) are reported apart: PyRIT fills them at
    load time, so they are neither parameters nor undeclared.
    """
    if not looks_like_template(value):
        return TemplateReport(is_template=False, unused=tuple(sorted(set(parameters))))
    error = syntax_error(value)
    if error is not None:
        return TemplateReport(is_template=True, syntax_error=error)
    used = _used_names(value)
    paths = used & PYRIT_PATH_VARIABLES
    used -= paths
    declared = set(parameters)
    return TemplateReport(
        is_template=True,
        used=tuple(sorted(used)),
        undeclared=tuple(sorted(used - declared)),
        unused=tuple(sorted(declared - used)),
        path_variables=tuple(sorted(paths)),
    )


# --- rendering (in a child process) -------------------------------------------------------------


@dataclass
class RenderResult:
    """A rendered preview (``text``) or why there is none (``error``), plus warnings."""

    text: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


def render(
    value: str,
    *,
    parameters: Sequence[str],
    values: Mapping[str, str],
    timeout: float = TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> RenderResult:
    """Render ``value`` with ``values`` for its declared ``parameters``, safely.

    Every declared parameter must have a value (``StrictUndefined``: a missing one is an
    error). Placeholders used but not declared are kept as ``{{ name }}`` (unless ``values``
    has one for them) and reported as a warning, as are declared parameters the template
    never uses. Runs in a child process with time, memory and output limits; any failure
    comes back as ``error``, never as an exception.
    """
    report = analyse(value, parameters)
    if report.syntax_error:
        return RenderResult(error=f"template syntax error, {report.syntax_error}")
    missing = [name for name in parameters if name not in values]
    if missing:
        return RenderResult(error=f"no value for declared parameter(s): {', '.join(missing)}")
    too_long = [name for name, text in values.items() if len(str(text)) > MAX_VALUE]
    if too_long:
        return RenderResult(error=f"values longer than {MAX_VALUE} characters: {too_long}")
    context = {name: str(values[name]) for name in parameters}
    # Undeclared placeholders get a value only when one is given; they and PyRIT's path
    # variables otherwise stay as they are written.
    for name in report.undeclared:
        context[name] = str(values.get(name) or "{{ " + name + " }}")
    for name in report.path_variables:
        context.setdefault(name, "{{ " + name + " }}")
    request = {"template": value, "context": context, "max_output": max_output}
    result = _run_child(request, timeout=timeout)
    result.warnings = report.warnings + result.warnings
    return result


def _run_child(request: dict[str, Any], *, timeout: float) -> RenderResult:
    command = [sys.executable, "-I", os.path.abspath(__file__), "--render-child"]
    try:
        done = subprocess.run(  # fixed argv: this interpreter and this file
            command,
            input=json.dumps(request).encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            env={"LC_ALL": "C.UTF-8"},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return RenderResult(error=f"rendering took longer than {timeout:g} s and was stopped")
    if done.returncode != 0:
        if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return RenderResult(error=f"rendering used more than {CPU_SECONDS} s of CPU time")
        if b"MemoryError" in done.stderr:
            return RenderResult(error="rendering used too much memory and was stopped")
        return RenderResult(error="rendering failed")
    try:
        answer = json.loads(done.stdout.decode("utf-8"))
    except ValueError:
        return RenderResult(error="rendering failed")
    return RenderResult(
        text=answer.get("text"),
        error=answer.get("error"),
        truncated=bool(answer.get("truncated")),
    )


def render_in_this_process(template: str, context: Mapping[str, str], max_output: int) -> dict:
    """Render in the current process with the limited sandbox; the child's body.

    Output is streamed and cut at ``max_output`` characters. Returns the child's answer.
    """
    env = LimitedSandbox(max_output=max_output)
    try:
        compiled = env.from_string(template)
        parts, size = [], 0
        for chunk in compiled.generate(**context):
            size += len(chunk)
            if size > max_output:
                parts.append(chunk[: max_output - (size - len(chunk))])
                return {"text": "".join(parts), "truncated": True}
            parts.append(chunk)
        return {"text": "".join(parts)}
    except SecurityError as exc:
        return {"error": f"refused by the sandbox: {exc}"}
    except TemplateError as exc:
        return {"error": f"template error: {exc}"}
    except RecursionError:
        return {"error": "the template recursed too deeply"}
    except MemoryError:
        return {"error": "rendering used too much memory and was stopped"}
    except (ArithmeticError, ValueError, TypeError, LookupError, AttributeError) as exc:
        return {"error": f"template error: {type(exc).__name__}: {exc}"}


def _limit_this_process() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


def _child_main() -> int:
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    # Import and compile everything once, so that nothing needs files or forks under the limits.
    LimitedSandbox().from_string("{% for i in range(1) %}{{ [i]|join }}{% endfor %}").render()
    _limit_this_process()
    answer = render_in_this_process(
        request["template"], request["context"], int(request["max_output"])
    )
    sys.stdout.buffer.write(json.dumps(answer).encode("utf-8"))
    return 0


if __name__ == "__main__" and sys.argv[1:] == ["--render-child"]:
    sys.exit(_child_main())
