"""Seed template rendering: the sandbox holds against known SSTI payloads and blow-ups.

Each payload is rendered through the product path (a limited child process). A payload
passes when the result reaches no Python internals (no class, module, function or config
repr in the output) and the render ends, quickly, with an error or a bounded text.
"""

from __future__ import annotations

import time

import pytest

from seeds.templating import MAX_OUTPUT, analyse, render, syntax_error

#: Text that would only appear if a payload reached Python objects.
LEAKS = ("<class", "<module", "<function", "<built-in", "<bound", "subprocess", "uid=", "root:")

SSTI_PAYLOADS = [
    # attribute walks to the object graph
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''.__class__.__base__.__subclasses__() }}",
    "{{ ().__class__.__bases__[0].__subclasses__() }}",
    "{{ [].__class__.__base__.__subclasses__() }}",
    "{{ prompt.__class__.__mro__[1].__subclasses__()[40]('/etc/passwd').read() }}",
    "{{ ''['__class__']['__mro__'] }}",
    "{{ ''|attr('__class__') }}",
    "{{ request.application.__globals__.__builtins__.__import__('os').popen('id').read() }}",
    "{{ self.__init__.__globals__.__builtins__ }}",
    "{{ self._TemplateReference__context }}",
    "{{ config.__class__.__init__.__globals__['os'].popen('id').read() }}",
    "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "{{ url_for.__globals__['current_app'].config }}",
    "{{ get_flashed_messages.__globals__ }}",
    "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
    # cycler / joiner / namespace pivots
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ joiner.__init__.__globals__.os.popen('id').read() }}",
    "{{ namespace.__init__.__globals__.os.popen('id').read() }}",
    "{% set n = namespace() %}{{ n.__class__.__init__.__globals__ }}",
    "{% set n = namespace(a=1) %}{{ n.__dict__ }}",
    "{{ range.__self__ }}",
    "{{ dict.__subclasses__() }}",
    "{{ dict(a=1).items.__self__.__class__ }}",
    # format-string tricks
    "{{ '{0.__class__}'.format(prompt) }}",
    "{{ '{0.__init__.__globals__}'.format(cycler) }}",
    "{{ prompt.format_map({}) }}",
    "{{ '%s' % prompt.__class__ }}",
    # loop object and macros
    "{% for x in range(1) %}{{ loop.__class__ }}{% endfor %}",
    "{% macro m() %}{% endmacro %}{{ m.__globals__ }}",
    "{{ caller }}",
]

EXHAUSTION_PAYLOADS = [
    "{{ 'a' * 1000000000 }}",
    "{{ prompt * 999999999 }}",
    "{{ [1] * 1000000000 }}",
    "{{ 9 ** 9 ** 9 }}",
    "{{ 2 ** 100000000 }}",
    "{{ range(1000000000)|list }}",
    "{{ range(10**9)|join }}",
    "{{ 'a'|center(1000000000) }}",
    "{{ 'a'|indent(1000000000, true) }}",
    "{{ 'x'|replace('', 'y' * 99999) }}",
    "{{ '%0999999999d' % 1 }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{{ 'a'.ljust(1000000000) }}",
    "{{ range(10000)|slice(1000000000)|list }}",
    "{{ range(10)|batch(1000000000, 'x')|list }}",
    "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
    "{% for i in range(10000) %}{% for j in range(10000) %}{{ j }}{% endfor %}{% endfor %}",
    "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}"
    "{% endfor %}{{ ns.s|length }}",
    "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}",
    "{% set x = [] %}{% for i in range(100) %}{% set _ = x.append(x) %}{% endfor %}",
]


def assert_contained(result, elapsed: float) -> None:
    text = result.text or ""
    for leak in LEAKS:
        assert leak not in text, (leak, text[:200])
    assert len(text) <= MAX_OUTPUT
    # The child's CPU limit is 2 s; start-up and scheduling on a busy 2-core box add some.
    assert elapsed < 10


@pytest.mark.parametrize("payload", SSTI_PAYLOADS)
def test_ssti_payloads_reach_no_python_internals(payload):
    started = time.monotonic()
    result = render(payload, parameters=["prompt"], values={"prompt": "hello"})
    assert_contained(result, time.monotonic() - started)
    # Either refused outright or rendered to harmless text (undeclared names stay literal).
    assert result.error or "__" not in (result.text or "").replace("{{", "")


@pytest.mark.parametrize("payload", EXHAUSTION_PAYLOADS)
def test_blow_ups_neither_exhaust_memory_nor_time(payload):
    started = time.monotonic()
    result = render(payload, parameters=["prompt"], values={"prompt": "hello"})
    assert_contained(result, time.monotonic() - started)
    assert result.error or result.truncated or len(result.text or "") < MAX_OUTPUT


def test_a_refused_attribute_is_a_sandbox_error():
    result = render("{{ prompt.__class__ }}", parameters=["prompt"], values={"prompt": "x"})
    assert result.error == (
        "refused by the sandbox: access to attribute '__class__' of 'str' object is unsafe."
    )


def test_normal_templates_render():
    result = render(
        "Hi {{ prompt|upper }}{% for w in prompt.split() %} [{{ loop.index }}:{{ w }}]{% endfor %}",
        parameters=["prompt"],
        values={"prompt": "two words"},
    )
    assert result.ok and result.text == "Hi TWO WORDS [1:two] [2:words]"
    assert result.warnings == []


def test_declared_parameters_are_strict():
    result = render("Hi {{ prompt }}", parameters=["prompt"], values={})
    assert result.error == "no value for declared parameter(s): prompt"


def test_undeclared_placeholders_are_kept_and_warned():
    result = render(
        "{{ prompt }} in {{ language }} from {{ datasets_path }}/x.png",
        parameters=["prompt", "unused"],
        values={"prompt": "P", "unused": "U"},
    )
    assert result.text == "P in {{ language }} from {{ datasets_path }}/x.png"
    assert result.warnings == [
        "placeholders used but not declared in parameters: language",
        "parameters declared but not used: unused",
    ]
    given = render("{{ a }} {{ b }}", parameters=["a"], values={"a": "1", "b": "2"})
    assert given.text == "1 2"


def test_output_is_cut_at_the_limit():
    result = render(
        "{% for i in range(10000) %}{{ prompt }}{% endfor %}",
        parameters=["prompt"],
        values={"prompt": "x" * 100},
        max_output=5000,
    )
    assert result.truncated and len(result.text) == 5000


def test_a_cpu_hog_is_stopped_by_the_limit():
    started = time.monotonic()
    result = render(
        "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
        parameters=[],
        values={},
    )
    # The CPU limit, or the wall-clock one when a busy machine gives the child little CPU.
    assert "CPU" in result.error or "longer than" in result.error
    assert time.monotonic() - started < 10


def test_analysis_and_syntax_checks():
    report = analyse("{% set z = 1 %}{{ z }} {{ a }} {{ b.c }} {{ datasets_path }}", ["a", "x"])
    assert report.used == ("a", "b")
    assert report.undeclared == ("b",)
    assert report.unused == ("x",)
    assert report.path_variables == ("datasets_path",)
    assert (
        syntax_error("{{ a ")
        == "line 1: unexpected end of template, expected 'end of print statement'."
    )
    assert syntax_error("fine {{ a }}") is None
    assert analyse("plain text", []).is_template is False
