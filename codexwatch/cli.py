"""Command line: the dashboard by default, and headless commands for scripts.

Each command lives in `codexwatch/commands/<name>.py` as `run(args, settings) -> int`,
imported only when used, so `codexwatch turns` never loads Textual.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from codexwatch import __version__
from codexwatch.config import ConfigError, load_settings

COMMANDS = {
    "turns": "every turn, one per line (JSON Lines with --json)",
    "stats": "failure statistics per model, by hour of week, episodes, parser health",
    "status": "Codex components and incidents from status.openai.com",
    "advise": "what to do now, with the evidence (exit code says which action)",
    "report": "a redacted report of a failure episode, ready to paste",
    "run": "run `codex exec`, retrying through capacity errors the way the field guide says",
}

RUN_USAGE = ("codexwatch run [options] -- codex exec [codex args] PROMPT\n"
             "       codexwatch run --tasks FILE [--jobs N] [options] -- codex exec [codex args]")


def _common(parser: argparse.ArgumentParser, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--codex-home", metavar="DIR", default=default,
                        help="Codex home to read (default: $CODEX_HOME, else ~/.codex)")
    parser.add_argument("--status-url", metavar="URL", default=default,
                        help="status page base URL (default: https://status.openai.com)")
    parser.add_argument("--since", metavar="AGE", default=default,
                        help="how much history to read: 90m, 24h, 7d, 4w or 'all' (default 7d)")
    parser.add_argument("--no-status", action="store_true", default=default,
                        help="do not contact the status page")
    parser.add_argument("--no-cache", action="store_true", default=default,
                        help="ignore and do not write the index cache")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codexwatch",
        description="Why did Codex stop, is it you or OpenAI, and what to do next. "
        "Without a command, opens the live dashboard.",
        epilog="Codex's files are only ever read, never written. Settings: flags > "
        "CODEXWATCH_* environment > ~/.config/codexwatch/config.toml > defaults.",
    )
    parser.add_argument("--version", action="version", version=f"codexwatch {__version__}")
    _common(parser, suppress=False)
    parser.add_argument("--demo", action="store_true",
                        help="run on bundled sample sessions and status page, offline")
    parser.add_argument("--no-bell", action="store_true", help="no terminal bell on new failures")
    parser.add_argument("--no-notify", action="store_true", help="no pop-up notifications")
    parser.add_argument("--theme", metavar="NAME", help="Textual theme (default textual-dark)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if name == "run":
            _run_parser(sub, help_text)
            continue
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        _common(cmd, suppress=True)
        cmd.add_argument("--json", action="store_true", help="machine-readable output")
        if name in ("advise", "report"):
            cmd.add_argument("--at", metavar="TIME",
                             help="evaluate as if the clock read TIME (ISO-8601)")
        if name == "report":
            cmd.add_argument("--episode", metavar="ID", default="latest",
                             help="episode id from 'stats', or 'latest' (default)")
            cmd.add_argument("--output", metavar="FILE", help="write the report to FILE")
    return parser


def _run_parser(sub, help_text: str) -> None:
    cmd = sub.add_parser("run", help=help_text, usage=RUN_USAGE, description=help_text + ". "
                         "Exit 0 when every task ended in a successful turn, else the exit codes "
                         "of `advise` (11-22), 130/143 when interrupted, 2 for a bad argument, or "
                         "Codex's own status when it failed outside a turn.")
    default = argparse.SUPPRESS
    cmd.add_argument("--codex-home", metavar="DIR", default=default,
                     help="Codex home the runs write to (default: $CODEX_HOME, else ~/.codex)")
    cmd.add_argument("--status-url", metavar="URL", default=default,
                     help="status page base URL (default: https://status.openai.com)")
    cmd.add_argument("--no-status", action="store_true", default=default,
                     help="do not contact the status page")
    cmd.add_argument("--models", metavar="M1,M2,...",
                     help="models to walk down on capacity (default: Codex's catalogue, else "
                     "the models that worked in your history)")
    cmd.add_argument("--backoff", metavar="LIST",
                     help="waits after successive capacity or server failures, each +-20%% "
                     "(default 30s,2m,10m,30m)")
    cmd.add_argument("--quick", metavar="LIST",
                     help="waits after successive broken streams, same model (default 5s,15s,30s)")
    cmd.add_argument("--give-up-after", metavar="DUR",
                     help="stop once this long has passed since the first failure (default 30m)")
    cmd.add_argument("--wait-for-reset", metavar="MAX",
                     help="wait through a usage limit whose reset is known and within MAX "
                     "(default: stop at once, exit 17)")
    cmd.add_argument("--tasks", metavar="FILE",
                     help="one prompt per non-empty line, each passed as the last argument")
    cmd.add_argument("--jobs", metavar="N", type=int,
                     help="tasks run at once in --tasks mode, 0.5-2 s apart (default 2)")
    cmd.add_argument("--summary", metavar="FILE", help="write the JSON summary to FILE")
    cmd.add_argument("--archive", metavar="DIR",
                     help="on a final failure, write report.md, report.json and summary.json here")


def _settings_from(args: argparse.Namespace):
    flags = {
        "codex_home": getattr(args, "codex_home", None),
        "status_url": getattr(args, "status_url", None),
        "since": getattr(args, "since", None),
        "status_enabled": False if getattr(args, "no_status", None) else None,
        "use_cache": False if getattr(args, "no_cache", None) else None,
        "bell": False if getattr(args, "no_bell", None) else None,
        "notify": False if getattr(args, "no_notify", None) else None,
        "theme": getattr(args, "theme", None),
    }
    return load_settings(flags)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    codex = None
    if "--" in argv and "run" in argv[: argv.index("--")]:
        # Everything after `--` is Codex's command line, untouched by argparse.
        at = argv.index("--")
        argv, codex = argv[:at], argv[at + 1:]
    args = parser.parse_args(argv)
    if args.command == "run":
        args.codex = codex
    try:
        settings = _settings_from(args)
    except ConfigError as exc:
        print(f"codexwatch: {exc}", file=sys.stderr)
        return 2
    name = args.command or "dashboard"
    module = importlib.import_module(f"codexwatch.commands.{name}")
    try:
        return module.run(args, settings)
    except ConfigError as exc:
        print(f"codexwatch: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `codexwatch turns --json | head`
        return 0


def entry() -> None:
    """The `codexwatch` program. A headless command's process ends as soon as its output is
    out: tearing the interpreter down would free a large history object by object first
    (40 ms of a 0.9 s `stats` over 1 GiB), for nothing. The dashboard exits the usual way."""
    code = main()
    if "textual" in sys.modules:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away: nothing more to say
        pass
    os._exit(code)
