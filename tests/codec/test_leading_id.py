"""``leading_id``: the top-level id of a JSON object read only in part (a stdio line past
``max_line_bytes``), so an oversized request is refused under its own id (found by a typed-tools
review: the official Python SDK's client drops an error without an id and waits for ever)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcpgen._runtime.jsonrpc import leading_id


@pytest.mark.parametrize(
    ("head", "rid"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"x": "', 7),
        (b'{"id":"a\\"b","method":', 'a"b'),
        (b'{"id":"a\\"b","method"', None),  # the member that tells a request is not read whole
        (b' \n{ "method" : "x" , "params" : {"id": 1, "a": [1, {"id": 2}], "s": "}]\\""}, "id": -3 }', -3),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"text":"', None),  # id not reached
        (b'{"id": 12', None),  # 12 or 123...: not ended within the head
        (b'{"id": 1.5, "method": "x"}', None),  # not a request id
        (b'{"id": null, "method": "x"}', None),
        (b'{"id": true, "method": "x"}', None),
        (b'{"id": {"a": 1}, "method": "x"}', None),
        (b'{"id": "unterminated', None),
        (b'[{"id": 1}]', None),  # a batch: no single id
        (b'{"params": {"id": 5}}', None),  # nested ids are not the message's
        (b'{"a": tru', None),
        (b"", None),
        (b"not json", None),
        (b'{"\\u0069d": 4, "method": "x"}', 4),  # the key as JSON spells it
        (b'{"jsonrpc": "2.0", "id": 5, "result": {"content": [', None),  # a response: another side's id
        (b'{"jsonrpc": "2.0", "id": 5, "params": {"a": 1}, "error"', None),
        (b'{"id": 5, "id": 6, "method": "x"}', None),  # JSON keeps the last: not the one read first
        (b'{"id":5,"method":"x","id":6}', None),  # (a review of the diff: 5 was returned)
        (b'{"method":"x","id":5,"id":6}', None),
        (b'{"method":"x","id":5,"params":{"id":6},"more":[1,"id"]', 5),  # nested and string ids: no members
        (b'{"id":\x0c5,"method":"x"}', None),  # a form feed is no JSON whitespace
    ],
)
def test_the_id_is_read_as_json_would_read_it_or_not_at_all(head: bytes, rid: Any) -> None:
    assert leading_id(head) == rid


def test_a_response_id_is_read_only_as_a_response() -> None:
    head = b'{"jsonrpc":"2.0","id":"r1","result":{"content":[{"type":"text","text":"xxxx'
    assert leading_id(head, "response") == "r1" and leading_id(head) is None
    assert leading_id(b'{"id": 3, "error": {"code": -1', "response") == 3
    assert leading_id(b'{"id": 3, "method": "ping"', "response") is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(
    before=st.dictionaries(
        st.text(max_size=6).filter(lambda k: k not in ("id", "method", "result", "error")), JSON, max_size=4
    ),
    rid=st.integers() | st.text(max_size=10),
    cut=st.integers(min_value=0, max_value=400),
)
def test_any_prefix_gives_the_id_or_nothing_never_a_wrong_one(before: dict[str, Any], rid: Any, cut: int) -> None:
    whole = json.dumps({**before, "id": rid, "method": "x"}).encode()
    found = leading_id(whole[:cut])
    assert found is None or (found == rid and type(found) is type(rid)), (whole[:cut], found)
    assert leading_id(whole) == rid
