"""The bill: each provider's prices, with its cache read discount and write premium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import Piped
from hypothesis import given
from hypothesis import strategies as st
from llm_stub import llm_stub, recorded

from toolsift import AgentError
from toolsift.agent import Usage, UserMessage
from toolsift.agent.llm import load_model
from toolsift.agent.llm.openai_responses import OpenAIResponsesModel
from toolsift.agent.llm.prices import Price, PriceTable

SONNET = Price(input=2.0, output=10.0, cache_read=0.1, cache_write=2.5)


def test_a_request_costs_its_uncached_input_reads_writes_and_output_each_at_its_price() -> None:
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=600_000, cache_write_tokens=300_000, output_tokens=10_000)
    assert SONNET.cost(usage) == pytest.approx(100_000 * 2 / 1e6 + 0.6 * 0.1 + 0.3 * 2.5 + 0.01 * 10)
    assert SONNET.read_ratio == pytest.approx(0.05) and SONNET.write_ratio == 1.25


def test_the_shipped_table_prices_each_provider_with_its_own_discount_and_premium() -> None:
    table = PriceTable.default()
    sonnet = table.price("anthropic", "claude-sonnet-5-5")
    newest, older = table.price("openai", "gpt-5.6-terra"), table.price("openai", "gpt-5.4")
    assert sonnet is not None and sonnet.write_ratio == 1.25
    assert newest is not None and newest.read_ratio == pytest.approx(0.1) and newest.write_ratio == 1.25
    assert older is not None and older.write_ratio == 1.0  # no write premium before GPT-5.6


def test_a_dated_snapshot_is_its_model_and_a_longer_name_is_not() -> None:
    table = PriceTable.default()
    assert table.price("anthropic", "claude-sonnet-5-5-20260901") == table.price("anthropic", "claude-sonnet-5-5")
    assert table.price("openai", "gpt-5-mini-2025-08-07") == table.price("openai", "gpt-5-mini")
    assert table.price("openai", "gpt-5.4-mini") != table.price("openai", "gpt-5.4")
    assert table.price("openai", "gpt-5.7") is None  # not gpt-5's price
    assert table.price("anthropic", "claude-sonnet-5-7") is None
    assert table.price("mistral", "large") is None


def test_a_newer_table_is_laid_over_the_shipped_one(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"_note": "mine", "openai": {"gpt-9": SONNET.__dict__}}))
    table = PriceTable.default().merged(PriceTable.from_file(path))
    assert table.price("openai", "gpt-9") == SONNET
    assert table.price("openai", "gpt-5.4") == PriceTable.default().price("openai", "gpt-5.4")


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ([], "a price table is an object of providers"),
        ({"openai": 3}, "openai must be an object of models"),
        ({"openai": {"gpt-9": 2}}, r"openai.gpt-9 must be an object with input, output"),
        ({"openai": {"gpt-9": {**SONNET.__dict__, "cache_read": None}}}, r"openai.gpt-9.cache_read must be a"),
        ({"openai": {"gpt-9": {**SONNET.__dict__, "output": -1}}}, r"openai.gpt-9.output must be a non-negative"),
        ({"openai": {"gpt-9": {**SONNET.__dict__, "input": True}}}, r"openai.gpt-9.input must be"),
    ],
)
def test_a_bad_table_is_refused_naming_the_field(data: object, error: str) -> None:
    with pytest.raises(AgentError, match=error):
        PriceTable.from_mapping(data, origin="mine.json")


def test_an_unreadable_table_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(AgentError, match="bad.json' cannot be read"):
        PriceTable.from_file(tmp_path / "bad.json")
    with pytest.raises(AgentError, match="missing.json' cannot be read"):
        PriceTable.from_file(tmp_path / "missing.json")


costs = st.none() | st.floats(min_value=0, max_value=10, allow_nan=False)


@given(costs, costs, costs)
def test_a_sum_of_usages_counts_the_costs_that_are_known(a: float | None, b: float | None, c: float | None) -> None:
    total = Usage(cost=a) + Usage(cost=b) + Usage(cost=c)
    known = [cost for cost in (a, b, c) if cost is not None]
    assert total.cost == (pytest.approx(sum(known)) if known else None)


async def test_a_reply_carries_its_cost_by_the_table_given_to_the_model() -> None:
    reply = recorded("openai_final.json")
    reply["usage"] = {"prompt_tokens": 2000, "completion_tokens": 8, "prompt_tokens_details": {"cached_tokens": 1500}}
    table = PriceTable.from_mapping({"openai": {"gpt-test": SONNET.__dict__}})
    with llm_stub((200, reply), (200, reply)) as stub:
        priced = load_model("openai:gpt-test", api_key="k", base_url=stub.url + "/v1", prices=table)
        unknown = load_model("openai:gpt-unknown", api_key="k", base_url=stub.url + "/v1")
        first = (await priced.complete("", [UserMessage("hi")], [])).usage
        second = (await unknown.complete("", [UserMessage("hi")], [])).usage
    assert first is not None and first.cost == pytest.approx((500 * 2 + 1500 * 0.1 + 8 * 10) / 1e6)
    assert second is not None and second.cost is None
    assert OpenAIResponsesModel("gpt-5.4", api_key="k", prices=table).price is None


def test_chat_prints_each_answer_s_cost_and_the_chat_s_total(tmp_path: Path, examples_in_process: None) -> None:
    path = tmp_path / "toolsift.json"
    path.write_text(json.dumps({"tools": {"mcpServers": {}}, "skills": {"userSkills": False}}))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai": {"gpt-test": SONNET.__dict__}}))
    reply = recorded("openai_final.json")
    reply["usage"] = {"prompt_tokens": 2000, "completion_tokens": 8, "prompt_tokens_details": {"cached_tokens": 1500}}
    chat = Piped("how many words?", "and now?", "/quit")
    with llm_stub((200, reply), (200, reply)) as stub:
        code = chat.run(
            "-c", str(path), "chat", "-m", "openai:gpt-test", "--base-url", stub.url, "--prices", str(prices)
        )
    assert code == 0, chat.err.text
    shown = chat.out.text + chat.err.text
    assert "[tokens] 2,000 in, 75% from cache, 8 out, $0.0012 (chat $0.0012)" in shown
    assert "$0.0012 (chat $0.0025)" in shown


def test_chat_refuses_a_bad_price_table_naming_it(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai": {"gpt-test": {"input": 1}}}))
    chat = Piped("/quit")
    code = chat.run("chat", "-m", "openai:gpt-test", "--base-url", "http://127.0.0.1:9", "--prices", str(prices))
    assert code != 0
    assert "gpt-test.output must be a non-negative number" in chat.out.text + chat.err.text
