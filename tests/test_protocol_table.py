"""The derived method table matches research/spec-eras.md section 2.2 for the revisions it covers;
the overlay and the log levels are checked for every revision schema/lock.json locks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import Lock
from mcp_schema_codegen.ir.analyze import analyze_revision, load_overlay, stale_overlay_entries
from mcp_schema_codegen.ir.protocol import Protocol
from tests.conftest import ROOT, SCHEMA_DIR, VERSIONS

# Transcribed from section 2.2: method -> cell per revision (2024-11-05 ... 2026-07-28).
# C>S client to server, S>C server to client, C<>S both, MRTR embedded in InputRequiredResult,
# "-" absent; a trailing " dep" marks a 2026 deprecation. notifications/cancelled in 2026 is
# C->S plus S->C (stdio, to end a listen stream): both directions.
MATRIX = """
initialize                               C>S   C>S   C>S   C>S   -
ping                                     C<>S  C<>S  C<>S  C<>S  -
server/discover                          -     -     -     -     C>S
completion/complete                      C>S   C>S   C>S   C>S   C>S
logging/setLevel                         C>S   C>S   C>S   C>S   -
prompts/list                             C>S   C>S   C>S   C>S   C>S
prompts/get                              C>S   C>S   C>S   C>S   C>S
resources/list                           C>S   C>S   C>S   C>S   C>S
resources/templates/list                 C>S   C>S   C>S   C>S   C>S
resources/read                           C>S   C>S   C>S   C>S   C>S
resources/subscribe                      C>S   C>S   C>S   C>S   -
resources/unsubscribe                    C>S   C>S   C>S   C>S   -
subscriptions/listen                     -     -     -     -     C>S
tools/list                               C>S   C>S   C>S   C>S   C>S
tools/call                               C>S   C>S   C>S   C>S   C>S
tasks/get                                -     -     -     C<>S  -
tasks/result                             -     -     -     C<>S  -
tasks/cancel                             -     -     -     C<>S  -
tasks/list                               -     -     -     C<>S  -
sampling/createMessage                   S>C   S>C   S>C   S>C   MRTR_dep
roots/list                               S>C   S>C   S>C   S>C   MRTR_dep
elicitation/create                       -     -     S>C   S>C   MRTR
notifications/initialized                C>S   C>S   C>S   C>S   -
notifications/cancelled                  C<>S  C<>S  C<>S  C<>S  C<>S
notifications/progress                   C<>S  C<>S  C<>S  C<>S  S>C
notifications/message                    S>C   S>C   S>C   S>C   S>C_dep
notifications/roots/list_changed         C>S   C>S   C>S   C>S   -
notifications/resources/list_changed     S>C   S>C   S>C   S>C   S>C
notifications/resources/updated          S>C   S>C   S>C   S>C   S>C
notifications/prompts/list_changed       S>C   S>C   S>C   S>C   S>C
notifications/tools/list_changed         S>C   S>C   S>C   S>C   S>C
notifications/subscriptions/acknowledged -     -     -     -     S>C
notifications/tasks/status               -     -     -     C<>S  -
notifications/elicitation/complete       -     -     -     S>C   -
"""
ARROWS = {"C>S": "client_to_server", "S>C": "server_to_client", "C<>S": "both", "MRTR": "server_to_client"}
COUNTS = {"2024-11-05": 24, "2025-03-26": 24, "2025-06-18": 25, "2025-11-25": 31, "2026-07-28": 21}
TRANSCRIBED = tuple(COUNTS)  # the revisions section 2.2 covers, the columns of MATRIX in order


def _expected(version: str) -> dict[str, tuple[str, bool, bool]]:
    column = TRANSCRIBED.index(version)
    rows = {}
    for line in MATRIX.strip().splitlines():
        method, *cells = line.split()
        cell = cells[column]
        if cell == "-":
            continue
        arrow, _, flag = cell.partition("_")
        rows[method] = (ARROWS[arrow], arrow == "MRTR", flag == "dep")
    return rows


@pytest.fixture(scope="module")
def protocols(lock: Lock) -> dict[str, Protocol]:
    overlay = load_overlay(SCHEMA_DIR / "overlay.json")
    return {v: analyze_revision(lock, v, overlay).protocol for v in VERSIONS}


@pytest.mark.parametrize("version", TRANSCRIBED)
def test_method_table_matches_section_2_2(protocols: dict[str, Protocol], version: str) -> None:
    protocol = protocols[version]
    got = {m.name: (m.direction, m.embedded, m.deprecated) for m in protocol.methods}
    assert got == _expected(version)
    assert len(protocol.methods) == COUNTS[version]
    assert protocol.era == ("modern" if version == "2026-07-28" else "legacy")


def test_results_and_flags(protocols: dict[str, Protocol]) -> None:
    legacy, modern = protocols["2025-11-25"], protocols["2026-07-28"]
    for name in ("ping", "resources/subscribe", "resources/unsubscribe", "logging/setLevel"):
        assert legacy.method(name).result_type == "EmptyResult"
    assert legacy.method("tools/call").task_result == "CreateTaskResult"
    assert legacy.method("tasks/result").result_type == "GetTaskPayloadResult"
    assert {m.name for m in modern.methods if m.mrtr} == {"tools/call", "prompts/get", "resources/read"}
    assert {m.name for m in modern.methods if m.cacheable} == {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
    assert modern.method("tools/call").stub_name == "call_tool"
    assert modern.method("tools/list").stub_name == "list_tools"
    assert modern.method("server/discover").stub_name == "discover"
    assert protocols["2025-03-26"].batching and not any(p.batching for v, p in protocols.items() if v != "2025-03-26")
    assert all(m.params_required for m in modern.methods if m.kind == "request" and not m.embedded)


def test_overlay_has_no_stale_entries(lock: Lock) -> None:
    overlay = load_overlay(SCHEMA_DIR / "overlay.json")
    pairs = []
    for version in VERSIONS:
        analysed = analyze_revision(lock, version, overlay)
        schema, protocol = analysed.schema, analysed.protocol
        pairs.append((schema, protocol))
    assert stale_overlay_entries(overlay, pairs) == []


def test_a_stale_overlay_entry_is_reported(lock: Lock, tmp_path) -> None:  # type: ignore[no-untyped-def]
    raw = json.loads((SCHEMA_DIR / "overlay.json").read_text())
    raw["empty_result"]["methods"].append("tools/call")
    raw["deprecated"]["2026-07-28"]["definitions"].append("NoSuchThing")
    raw["sse_priming"]["versions"] += ["2026-07-28", "2099-01-01"]  # a modern revision has no legacy streams
    raw["resource_not_found"]["codes"]["2099-01-01"] = -32002
    raw["log_levels"]["order"].insert(0, "trace")
    raw["capabilities"]["server"]["greetings"] = {"requests": "greetings/"}
    raw["capabilities"]["server"]["tools"]["flags"]["validate"] = "tools/validate"
    raw["capabilities"]["server"]["tasks"] = {"requests": "tasks/augment/"}  # 2025-11-25's property, no such requests
    raw["capabilities"]["client"]["notes"] = {"requests": "notes/"}
    raw["capabilities"]["client"]["roots"]["members"] = {
        "nested": {"param": "depth"}
    }  # no ClientCapabilities.roots.nested
    raw["mcp_name"]["params"]["ping"] = "name"
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(raw))
    overlay = load_overlay(path)
    pairs = [(a.schema, a.protocol) for a in (analyze_revision(lock, v, overlay) for v in VERSIONS)]
    problems = stale_overlay_entries(overlay, pairs)
    assert any("tools/call" in p for p in problems) and any("NoSuchThing" in p for p in problems)
    assert "sse_priming: 2026-07-28 is not a locked legacy revision" in problems
    assert "sse_priming: 2099-01-01 is not a locked legacy revision" in problems
    assert "resource_not_found: 2099-01-01 is not a locked revision" in problems
    assert "log_levels: 'trace' is a LoggingLevel value in no locked schema" in problems
    assert "mcp_name: 'ping' has params with 'name' in no locked modern schema" in problems
    assert [p for p in problems if p.startswith("capabilities")] == [
        "capabilities.server.tools: flag 'validate' with 'tools/validate' is in no locked schema",
        "capabilities.server: 'greetings' is in no locked schema (ServerCapabilities, with its messages)",
        "capabilities.server: 'tasks' is in no locked schema (ServerCapabilities, with its messages)",
        "capabilities.client.roots.members: 'nested' is in no locked schema (ClientCapabilities.roots.nested)",
        "capabilities.client: 'notes' is in no locked schema (ClientCapabilities, with its requests)",
    ]


def test_a_revision_hands_on_only_its_own_log_levels_in_the_overlays_order(lock: Lock, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A spec-change review: a level the overlay ranks for a newer revision ("trace") went into
    every older package's ``REVISION.log_levels`` (regenerating them all), and a client then took
    it for a level their servers have. Each package hands on its ``LoggingLevel`` values only."""
    raw = json.loads((SCHEMA_DIR / "overlay.json").read_text())
    raw["log_levels"]["order"].insert(0, "trace")
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(raw))
    overlay = load_overlay(path)
    for version in VERSIONS:
        levels = analyze_revision(lock, version, overlay).protocol.log_levels
        assert levels == tuple(raw["log_levels"]["order"][1:]), version


def test_the_runtime_ranks_log_levels_as_the_overlay_orders_them() -> None:
    """The schema lists LoggingLevel's values but not their order: the overlay holds it, and the
    runtime's LOG_LEVELS (which ranks a message against a client's level) must agree with it."""
    from mcpgen._runtime.server.services.context import LOG_LEVELS

    overlay = load_overlay(SCHEMA_DIR / "overlay.json")
    assert list(LOG_LEVELS) == list(overlay.log_levels)
    assert sorted(LOG_LEVELS, key=LOG_LEVELS.__getitem__) == list(overlay.log_levels)


def test_each_revision_package_hands_the_runtime_the_overlays_ranking() -> None:
    """A spec-change review: a level a new revision added (ranked in the overlay, as adoption asks)
    still needed the runtime's own table, so ``ctx.log("trace")`` raised "unknown log level". Each
    generated package's ``REVISION`` carries the overlay's ranking, which the runtime takes."""
    import importlib

    import mcpgen
    from mcpgen._runtime.codec import Revision
    from mcpgen._runtime.log_levels import RANKS
    from mcpgen._runtime.method_table import MethodTable
    from mcpgen._runtime.server.services.context import Context

    overlay = load_overlay(SCHEMA_DIR / "overlay.json")
    for version in VERSIONS:
        revision = importlib.import_module(f"{mcpgen.REGISTRY.entry(version).package}.codec").REVISION
        assert list(revision.log_levels) == list(overlay.log_levels), version
    kept = dict(RANKS)
    try:
        Revision("2099-01-01", MethodTable(()), log_levels=["trace", *overlay.log_levels])
        assert RANKS["trace"] < RANKS["debug"] < RANKS["emergency"]
        ctx = Context(1, "tools/call", None, "2099-01-01", {}, None, None, "legacy", None, "trace")  # type: ignore[arg-type]
        assert ctx.logs("trace") and ctx.logs("debug")
        Revision("2098-01-01", MethodTable(()), log_levels=list(overlay.log_levels))  # an older package: fewer
        assert "trace" in RANKS  # a ranking of fewer levels changes nothing
    finally:
        RANKS.clear()
        RANKS.update(kept)


def test_an_overlay_from_before_log_levels_ranks_them_as_rfc_5424_does(lock: Lock, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A project's own schema/overlay.json is a copy made at its first adoption: one from before
    ``log_levels`` made every revision fail generation ("level 'alert' has no rank")."""
    raw = json.loads((SCHEMA_DIR / "overlay.json").read_text())
    del raw["log_levels"]
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(raw))
    overlay = load_overlay(path)
    assert overlay.log_levels == load_overlay(SCHEMA_DIR / "overlay.json").log_levels
    for version in VERSIONS:
        analyze_revision(lock, version, overlay)


def test_a_log_level_without_a_rank_is_refused_at_adoption_and_generation(lock: Lock, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A revision adding a level (say "trace") would have had it ranked as debug: delivered to a
    client that asked for debug and up, although trace is below it."""
    raw = json.loads((SCHEMA_DIR / "overlay.json").read_text())
    raw["log_levels"]["order"].remove("notice")
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(
        GeneratorError, match=r"definition 'LoggingLevel': level 'notice' has no rank: add it to log_levels"
    ):
        analyze_revision(lock, "2026-07-28", load_overlay(path))


def test_methods_command_prints_the_table() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_schema_codegen",
            "--schema-dir",
            str(SCHEMA_DIR),
            "methods",
            "--version",
            "2026-07-28",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    table = json.loads(out)
    assert table["era"] == "modern"
    call = next(r for r in table["methods"] if r["method"] == "tools/call")
    assert call == {
        "method": "tools/call",
        "kind": "request",
        "direction": "client_to_server",
        "definition": "CallToolRequest",
        "params": "CallToolRequestParams",
        "params_required": True,
        "result": "CallToolResult",
        "stub": "call_tool",
        "mrtr": True,
        "cacheable": False,
        "deprecated": False,
        "embedded": False,
        "task_result": None,
    }


def _with_requests(*requests: tuple[str, str]) -> Protocol:
    """2026-07-28 plus client requests (definition, method), each with a result of its own."""
    from mcp_schema_codegen.digest import sha256_hex
    from mcp_schema_codegen.frontend.load import parse_schema
    from mcp_schema_codegen.frontend.lock import LockedRevision
    from mcp_schema_codegen.ir.analyze import analyze_schema

    document = json.loads((SCHEMA_DIR / "2026-07-28" / "schema.json").read_text())
    defs = document["$defs"]
    for definition, method in requests:
        request = json.loads(json.dumps(defs["ListToolsRequest"]))
        request["properties"]["method"]["const"] = method
        defs[definition] = request
        defs[definition.removesuffix("Request") + "Result"] = json.loads(json.dumps(defs["ListToolsResult"]))
        defs["ClientRequest"]["anyOf"].append({"$ref": f"#/$defs/{definition}"})
    data = json.dumps(document).encode()
    rev = LockedRevision("2099-01-01", "modern", sha256_hex(data), len(data), "x")
    return analyze_schema(parse_schema(data, rev, ()), load_overlay(SCHEMA_DIR / "overlay.json")).protocol


def test_a_method_named_like_a_member_of_the_classes_it_joins_gets_a_name_of_its_own() -> None:
    """A handler ``router`` replaced ``HandlerBase.router`` (``run_stdio`` then failed); a client
    stub ``close`` would replace the client's: each takes a trailing underscore, as keywords do."""
    protocol = _with_requests(
        ("RouterRequest", "x/router"),
        ("RunStdioRequest", "x/run"),
        ("AcloseRequest", "x/c"),
        ("DiscoveredRequest", "x/d"),
    )
    names = {m.name: m.stub_name for m in protocol.methods}
    assert (names["x/router"], names["x/run"], names["x/c"]) == ("router_", "run_stdio_", "aclose_")
    assert names["x/d"] == "discovered_"  # set on the client in __init__
    assert names["tools/list"] == "list_tools"  # the schema's own names are untouched


@pytest.mark.parametrize(
    ("requests", "said"),
    [
        ((("GetURLRequest", "a/url"), ("GetUrlRequest", "b/url")), "'GetURLRequest' and 'GetUrlRequest'"),
        ((("ListToolsPagesRequest", "x/pages"),), "'ListToolsRequest' and 'ListToolsPagesRequest'"),
    ],
)
def test_two_methods_that_make_one_python_name_are_refused_naming_both(
    requests: tuple[tuple[str, str], ...], said: str
) -> None:
    with pytest.raises(GeneratorError) as refused:
        _with_requests(*requests)
    assert said in refused.value.message and "both make the Python name" in refused.value.message


def test_an_overlay_from_before_capabilities_stands_on_the_generators_own(lock: Lock, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A project's own overlay is a copy made at its first adoption: one from before
    ``capabilities`` and ``mcp_name`` must still declare what a server implements and check the
    ``Mcp-Name`` header."""
    raw = json.loads((SCHEMA_DIR / "overlay.json").read_text())
    del raw["capabilities"], raw["mcp_name"]
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(raw))
    overlay = load_overlay(path)
    bundled = load_overlay(SCHEMA_DIR / "overlay.json")
    assert overlay.server_capabilities == bundled.server_capabilities and overlay.server_capabilities
    assert overlay.client_capabilities == bundled.client_capabilities and overlay.client_capabilities
    protocol = analyze_revision(lock, "2026-07-28", overlay).protocol
    assert [c.name for c in protocol.server_capabilities] == ["completions", "logging", "prompts", "resources", "tools"]
    assert overlay.target_params == bundled.target_params
    assert {m.name: m.target_param for m in protocol.methods if m.target_param} == {
        "prompts/get": "name",
        "resources/read": "uri",
        "tools/call": "name",
    }


def test_an_overlay_from_before_members_stands_on_the_generators_own(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A project's overlay copied before ``members`` existed: its elicitation's url mode is still
    checked (regenerating with no members dropped the check without a word); ``{}`` says none."""
    raw = json.loads((SCHEMA_DIR / "overlay.json").read_text())
    del raw["capabilities"]["client"]["elicitation"]["members"]
    raw["capabilities"]["client"]["sampling"]["members"] = {}
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(raw))
    rules = load_overlay(path).client_capabilities
    bundled = load_overlay(SCHEMA_DIR / "overlay.json").client_capabilities
    assert rules["elicitation"].members == bundled["elicitation"].members != ()
    assert rules["sampling"].members == () and bundled["sampling"].members != ()


@pytest.mark.parametrize(
    ("entry", "side", "says"),
    [
        ({"flags": {}}, "server", "capabilities.server.x needs one of requests or notification (a string)"),
        ({"requests": "x/", "notification": "n"}, "server", "capabilities.server.x needs one of"),
        ({"requests": 5}, "server", "capabilities.server.x needs one of"),
        ({"notification": "n"}, "client", "capabilities.client.x needs one of requests (a string)"),
        ({"requests": "x/", "flags": {"a": "b"}}, "client", "capabilities.client.x.flags"),
        ({"requests": "x/", "flags": ["a"]}, "server", "capabilities.server.x.flags"),
        (
            {"requests": "x/", "members": {"a": {"param": "p"}}},
            "server",
            "capabilities.server.x.members: only a client",
        ),
        ({"requests": "x/", "members": {"a": {}}}, "client", "capabilities.client.x.members: each member maps to"),
        ({"requests": "x/", "members": {"a": {"param": "p", "value": 1}}}, "client", "('a': 'value' is 1)"),
        ({"requests": "x/", "members": {"a": {"param": "p", "implied": "yes"}}}, "client", "('a': 'implied' is 'yes')"),
        ({"requests": "x/", "members": ["a"]}, "client", "capabilities.client.x.members: an object of members"),
    ],
)
def test_a_malformed_capability_entry_names_itself(tmp_path, entry: dict, side: str, says: str) -> None:  # type: ignore[no-untyped-def,type-arg]
    raw = json.loads((SCHEMA_DIR / "overlay.json").read_text())
    raw["capabilities"][side]["x"] = entry
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(GeneratorError) as caught:
        load_overlay(path)
    assert says in str(caught.value)
