from __future__ import annotations

import pytest

from assistant.config import ConfigError, ConfigWarning, load_settings
from assistant.config_file import USER_KEYS
from assistant.home import open_home


def test_defaults_then_file_then_env(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[retrieval]\ntop_k = 5\n[llm]\nmodel_path = "/m.gguf"\n[expert.retrieval]\nrrf_k = 30\n'
    )
    settings = load_settings(cfg, env={"ASSISTANT_RETRIEVAL_TOP_K": "7"})
    assert settings.retrieval.top_k == 7
    assert settings.retrieval.rrf_k == 30
    assert settings.llm.model_path == "/m.gguf"
    assert settings.chunking.target_tokens == 200


@pytest.mark.parametrize(
    "text, message",
    [
        ("[retrieval\n", "not valid TOML"),
        ("[nope]\nx = 1\n", "unknown section"),
        ("[retreival]\ntop_k = 1\n", r"unknown section \[retreival\] \(did you mean \[retrieval\]"),
        ("[retrieval]\ntopk = 1\n", r"key retrieval.topk \(did you mean \[retrieval\] top_k"),
        ("[expert.answer]\nmax_token = 9\n", r"did you mean \[expert.answer\] max_tokens"),
        ("[expert.nope]\nx = 1\n", r"unknown section \[expert.nope\]"),
        ("[expert]\ntop_k = 1\n", r"\[expert.top_k\] must be a table"),
        ('[retrieval]\ntop_k = "many"\n', "expected int"),
        ('[expert.answer]\nduplicates = "hide"\n', "answer.duplicates: expected one of"),
        ('[expert.cache]\nreuse = "anywhere"\n', "cache.reuse: expected one of exact, any-order"),
        ('[expert.cache]\nrepair = "sink"\n', "cache.repair: expected none, sink-N"),
        ('[expert.cache]\nrepair = "blend-150"\n', "cache.repair: expected none, sink-N"),
        ('[expert.cache]\nrepair = "evidence-4"\n', "cache.repair: expected none, sink-N"),
        ('[expert.precompute]\nreader_nodes = "all"\n', "reader_nodes: expected lines, headers"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path, text, message):
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        load_settings(cfg, env={})
    assert str(cfg) in str(err.value)


def test_home_is_private(tmp_path):
    home = open_home(tmp_path / "h")
    assert (home.root.stat().st_mode & 0o777) == 0o700
    assert (home.index_dir.stat().st_mode & 0o777) == 0o700


def test_home_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSISTANT_HOME", str(tmp_path / "envhome"))
    assert open_home().root == tmp_path / "envhome"


def test_rerank_switch_from_file_then_env(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        'rerank = "full"\n[reranker]\nmodel = "smollm2-135m"\n[expert.reranker]\ncandidates = 30\n'
    )
    settings = load_settings(cfg, env={})
    assert settings.rerank == "full"
    assert settings.reranker.candidates == 30 and settings.reranker.model == "smollm2-135m"
    env = {"ASSISTANT_RERANK": "cross-pruned", "ASSISTANT_RERANKER_CROSS_THRESHOLD": "0.25"}
    settings = load_settings(cfg, env=env)
    assert settings.rerank == "cross-pruned" and settings.reranker.cross_threshold == 0.25
    assert load_settings(None, env={}).rerank == "auto"


def test_a_bad_rerank_switch_is_a_clear_error(tmp_path):
    expected = "rerank: expected one of off, full, cross, cross-pruned, auto"
    with pytest.raises(ConfigError, match=expected):
        load_settings(None, env={"ASSISTANT_RERANK": "fast"})


def test_an_expert_key_at_the_top_level_is_read_with_a_warning_saying_where_it_belongs(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[retrieval]\ntop_k = 4\nrrf_k = 30\n[cache]\nreuse = "exact"\n')
    with pytest.warns(ConfigWarning) as caught:
        settings = load_settings(cfg, env={})
    assert (settings.retrieval.top_k, settings.retrieval.rrf_k) == (4, 30)
    assert settings.cache.reuse == "exact"
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "cache.reuse belongs under [expert.cache] reuse" in messages[0]
    assert "retrieval.rrf_k belongs under [expert.retrieval] rrf_k" in messages[1]
    assert all(str(cfg) in m for m in messages)


def test_a_user_key_under_expert_is_read_with_a_warning(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[expert.precompute]\nidle_minutes = 3\n")
    with pytest.warns(ConfigWarning, match=r"belongs under \[precompute\] idle_minutes"):
        assert load_settings(cfg, env={}).precompute.idle_minutes == 3


def test_the_new_layout_reads_without_a_warning(tmp_path, recwarn):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        'rerank = "off"\n[llm]\nn_threads = 2\n[precompute]\nidle_minutes = 5\nac_only = true\n'
        '[expert.answer]\nmax_tokens = 80\n[expert.llm]\nkv_type = "q8_0"\n'
    )
    settings = load_settings(cfg, env={})
    assert (settings.llm.n_threads, settings.llm.kv_type) == (2, "q8_0")
    assert settings.precompute.ac_only and settings.answer.max_tokens == 80
    assert not [w for w in recwarn if issubclass(w.category, ConfigWarning)]


def test_env_vars_set_expert_and_user_keys_alike():
    env = {"ASSISTANT_ANSWER_MAX_TOKENS": "90", "ASSISTANT_CACHE_KV_BUDGET_MB": "512"}
    settings = load_settings(None, env=env)
    assert settings.answer.max_tokens == 90 and settings.cache.kv_budget_mb == 512


def test_the_readme_documents_every_user_key_at_the_top_level(tmp_path, recwarn):
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Configuration.*?```toml\n(.*?)```", readme, re.S).group(1)
    cfg = tmp_path / "config.toml"
    cfg.write_text(block, encoding="utf-8")
    assert load_settings(cfg, env={}) == load_settings(None, env={})  # the defaults, as said
    assert not [w for w in recwarn if issubclass(w.category, ConfigWarning)]
    for section, keys in USER_KEYS.items():
        assert f"[{section}]" in block
        for key in keys:
            assert re.search(rf"^{key} = ", block, re.M), f"{section}.{key}"


def test_a_retired_key_is_ignored_with_a_warning_saying_why(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[reranker]\nthreshold = 0.2\nresident_layers = 3\n")
    with pytest.warns(ConfigWarning) as caught:
        settings = load_settings(cfg, env={})
    assert not hasattr(settings.reranker, "threshold")
    messages = sorted(str(w.message) for w in caught)
    assert "reranker.resident_layers is ignored: " in messages[0] and "bench/ql" in messages[0]
    assert "reranker.threshold is ignored: " in messages[1]


def test_the_documented_configuration_reads_without_a_warning_and_names_every_setting(
    tmp_path, recwarn
):
    """docs/configuration.md lists every key where it belongs, with its default."""
    import dataclasses
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", doc, re.S).group(1)
    cfg = tmp_path / "config.toml"
    cfg.write_text(block, encoding="utf-8")
    settings = load_settings(cfg, env={})
    assert not [w for w in recwarn if issubclass(w.category, ConfigWarning)]
    defaults = load_settings(None, env={})
    assert settings == defaults
    for section in dataclasses.fields(defaults):
        if section.name == "rerank":
            continue
        for key in dataclasses.fields(getattr(defaults, section.name)):
            assert re.search(rf"^{key.name} = ", block, re.M), f"{section.name}.{key.name}"


def test_the_cli_says_where_an_old_key_belongs_and_names_a_misspelt_one(tmp_path, capsys):
    from assistant.cli import main

    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text("[retrieval]\ntop_k = 4\nrrf_k = 30\n")
    assert main(["stats", "--home", str(home), "--json"]) == 0
    err = capsys.readouterr().err
    assert "config:" in err and "retrieval.rrf_k belongs under [expert.retrieval] rrf_k" in err
    (home / "config.toml").write_text("[retrieval]\ntopk = 4\n")
    assert main(["stats", "--home", str(home), "--json"]) != 0
    err = capsys.readouterr().err
    assert "unknown key retrieval.topk (did you mean [retrieval] top_k?)" in err
    assert str(home / "config.toml") in err


def test_a_budget_that_would_drop_every_answer_or_is_no_number_is_an_error(tmp_path):
    """qa_budget_mb = 0 read as 'auto' (as kv_budget_mb's 0 is) would evict every remembered
    answer as the next is stored; inf or nan (valid TOML) is no size. Each names its key."""
    cfg = tmp_path / "config.toml"
    for text, key in (
        ("[cache]\nqa_budget_mb = 0\n", "cache.qa_budget_mb"),
        ("[cache]\nkv_budget_mb = -5\n", "cache.kv_budget_mb"),
        ("[cache]\nkv_budget_mb = inf\n", "cache.kv_budget_mb"),
        ("[expert.cache]\nqa_threshold = nan\n", "cache.qa_threshold"),
        ("[llm]\nn_threads = -1\n", "llm.n_threads"),
    ):
        cfg.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=key) as caught:
            load_settings(cfg, env={})
        assert str(cfg) in str(caught.value)
    cfg.write_text("[cache]\nkv_budget_mb = 0\nqa_budget_mb = 8\n", encoding="utf-8")
    assert load_settings(cfg, env={}).cache.qa_budget_mb == 8


def test_a_home_that_cannot_be_one_is_a_clear_error(tmp_path, capsys, monkeypatch):
    """--home naming a file (the mailbox, say) or a folder the user cannot change: an error
    naming the folder and what to do, not a traceback; a relative --home is kept absolute."""
    from assistant.cli import main
    from assistant.home import HomeError

    mailbox = tmp_path / "inbox.mbox"
    mailbox.write_text("From x\n", encoding="utf-8")
    assert main(["stats", "--home", str(mailbox)]) == 2
    err = capsys.readouterr().err
    assert f"error: {mailbox}: a file, not a folder" in err and mailbox.read_text() == "From x\n"
    monkeypatch.chdir(tmp_path)
    assert open_home("h").root == tmp_path / "h"

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("assistant.home.os.chmod", refused)
    with pytest.raises(HomeError, match="cannot be used as the home folder .Permission denied"):
        open_home(tmp_path / "theirs")


def test_rerank_below_a_section_and_a_retired_rerank_name_the_file(tmp_path):
    """`rerank = "full"` appended after a [section] (as after `model use` rewrote the file) is
    in that section by TOML's rule: the error says so rather than "did you mean writer"; a
    retired or unknown rerank value names the file it was set in."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('[models]\nwriter = "smollm2-135m"\nrerank = "full"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="rerank is read as models.rerank: a top-level key"):
        load_settings(cfg, env={})
    for value, said in (("pruned", "was removed"), ("fast", "expected one of")):
        cfg.write_text(f'rerank = "{value}"\n', encoding="utf-8")
        with pytest.raises(ConfigError, match=said) as caught:
            load_settings(cfg, env={})
        assert str(cfg) in str(caught.value)


def test_the_help_names_each_setting_where_config_toml_holds_it():
    """`precompute --help` said "default: [precompute] plan" and `ask --help` "[cache] reuse",
    "[cache] repair": keys of the [expert] tables, where a user who writes them as shown gets a
    warning that they belong elsewhere. Every "[section] key" a command's help names is now the
    table the file keeps it in."""
    import re

    from assistant.cli.cli import build_parser
    from assistant.config import Settings
    from assistant.config_file import place

    settings = Settings()
    commands = build_parser()._subparsers._group_actions[0].choices  # the subcommands' parsers
    named = []
    for sub in commands.values():
        for table, key in re.findall(r"\[([a-z_.]+)\]\s+([a-z_]+)", sub.format_help()):
            section = table.removeprefix("expert.")
            if hasattr(getattr(settings, section, None), key):  # "[name]": no setting
                named.append((f"[{table}] {key}", place(section, key)))
    assert named and all(shown == where for shown, where in named), named


def test_a_misspelt_environment_variable_is_said_with_the_nearest_name():
    """ASSISTANT_RETRIEVAL_TOPK=2 was ignored without a word (a misspelt key in the file is an
    error): search showed 10 rows. It is said now, with the name meant; ASSISTANT_HOME and
    the like, of no section, are not settings of this table and pass unremarked."""
    env = {"ASSISTANT_RETRIEVAL_TOPK": "2", "ASSISTANT_HOME": "/h", "ASSISTANT_RERANK": "off"}
    with pytest.warns(ConfigWarning) as caught:
        settings = load_settings(None, env=env)
    assert settings.retrieval.top_k == 10 and settings.rerank == "off"
    said = [str(w.message) for w in caught]
    assert said == [
        "env: ASSISTANT_RETRIEVAL_TOPK is no setting, ignored "
        "(did you mean ASSISTANT_RETRIEVAL_TOP_K?)"
    ]
