"""Settings (kestrel.config): environment, initialization options and changes, presets, errors."""

from __future__ import annotations

import pytest

from kestrel.config import SettingsError, load_settings


def test_environment_alone_configures_a_provider():
    s = load_settings(environ={"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "m", "OPENAI_BASE_URL": "http://x/v1",
                               "OPENAI_API_KEY": "sk-env", "KESTREL_EFFORT": "high"})
    assert (s.provider, s.model, s.base_url, s.api_key, s.effort) == ("chat", "m", "http://x/v1", "sk-env", "high")


def test_precedence_env_then_init_then_changed():
    env = {"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "env-model"}
    s = load_settings({"kestrel": {"model": "init-model", "completion": {"maxLines": 3}}}, {"kestrel": {"effort": "xhigh"}}, env)
    assert s.model == "init-model" and s.effort == "xhigh" and s.completion.max_lines == 3


def test_presets_fill_base_url_and_never_borrow_the_openai_key():
    s = load_settings({"provider": "groq"}, environ={"OPENAI_API_KEY": "sk-openai-secret"})
    assert s.provider == "chat" and s.base_url.startswith("https://api.groq.com") and s.api_key is None
    s = load_settings({"provider": "groq"}, environ={"GROQ_API_KEY": "gsk-x"})
    assert s.api_key == "gsk-x"
    s = load_settings({"provider": "ollama"}, environ={})
    assert s.provider == "fim" and s.base_url == "http://127.0.0.1:11434/v1"


def test_only_an_openai_key_selects_openai_websocket():
    s = load_settings(environ={"OPENAI_API_KEY": "sk-abc"})
    assert s.provider == "responses-ws" and s.preset == "openai" and s.configured


def test_nothing_configured():
    assert not load_settings(environ={}).configured


@pytest.mark.parametrize("bad", [{"effort": "max"}, {"provider": "nope"}, {"completion": {"maxLines": 0}},
                                 {"completion": {"latencyBudgetMs": -5}}, {"completion": {"minLineProbability": 1}},
                                 {"completion": {"minLineProbability": -0.1}}, {"completion": {"minLineProbability": True}},
                                 {"completion": {"minLineProbability": "5%"}}, {"local": {"speculative": "no"}},
                                 {"local": {"speculative": 0}}])
def test_bad_settings_raise_readable_errors(bad):
    with pytest.raises(SettingsError):
        load_settings(bad, environ={"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "m"})


def test_the_line_probability_floor_is_a_fraction_off_at_zero():
    env = {"KESTREL_PROVIDER": "fim", "KESTREL_MODEL": "m"}
    assert load_settings({}, environ=env).completion.min_line_probability == 0.05
    assert load_settings({"completion": {"minLineProbability": 0}}, environ=env).completion.min_line_probability == 0


def test_speculative_drafts_are_on_unless_turned_off():
    assert load_settings({}, environ={}).local.speculative is True
    assert load_settings({"local": {"speculative": False}}, environ={}).local.speculative is False


def test_unknown_nested_settings_are_ignored_not_fatal():
    s = load_settings({"completion": {"bogus": 1, "maxLines": 4}}, environ={"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "m"})
    assert s.completion.max_lines == 4 and s.configured


def test_settings_repr_hides_the_key():
    s = load_settings({"provider": "chat", "model": "m", "apiKey": "sk-supersecret-123456"}, environ={})
    assert "supersecret" not in repr(s)
