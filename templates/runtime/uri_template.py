"""RFC 6570 URI templates (string values; levels 1-4 operators, prefixes), for both sides: the
client expands a server's resource templates (``expand_uri_template``; the typed stubs name their
variables with ``uri_template_variables``), an App matches URIs against its own
(``server/authoring/signatures.UriTemplate``), from the one table of operators."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote

EXPRESSION = re.compile(r"\{([^{}]*)\}")
RESERVED = ":/?#[]@!$&'()*+,;=%"
# operator -> (first, separator, named, if-empty, allow reserved characters)
OPERATORS: dict[str, tuple[str, str, bool, str, bool]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}
QUERY = ("?", "&")  # the form-style query's operators: each variable optional


def expand_uri_template(template: str, values: Mapping[str, str | None]) -> str:
    """Expand ``template`` with string ``values`` (None: undefined, the variable is left out)."""

    def expression(match: re.Match[str]) -> str:
        body = match.group(1)
        operator = body[:1] if body[:1] in OPERATORS and body[:1] else ""
        first, separator, named, if_empty, reserved = OPERATORS[operator]
        parts = []
        for spec in body[len(operator) :].split(","):
            name, _, prefix = spec.rstrip("*").partition(":")
            value = values.get(name)
            if value is None:
                continue
            text = value[: int(prefix)] if prefix.isdigit() else value
            encoded = quote(text, safe=RESERVED if reserved else "")
            if named:
                parts.append(f"{name}={encoded}" if encoded else f"{name}{if_empty}")
            else:
                parts.append(encoded)
        return first + separator.join(parts) if parts else ""

    return EXPRESSION.sub(expression, template)


def uri_template_variables(template: str) -> list[tuple[str, bool]]:
    """Each variable of ``template`` once, in order, with whether it sits in a query expression
    (``{?x}``, ``{&x}``: optional; any other: required)."""
    seen: dict[str, bool] = {}
    for match in EXPRESSION.finditer(template):
        body = match.group(1)
        operator = body[:1] if body[:1] in OPERATORS and body[:1] else ""
        for spec in body[len(operator) :].split(","):
            name = spec.rstrip("*").partition(":")[0]
            if name and name not in seen:
                seen[name] = operator in QUERY
    return list(seen.items())
