"""`codexwatch` with no command: the live dashboard (and `--demo`)."""

from __future__ import annotations

import argparse
import sys

from codexwatch.config import Settings, parse_duration


def app_config(args: argparse.Namespace, settings: Settings):
    from codexwatch.sources.history import home_problem
    from codexwatch.sources.runs import default_state_dir
    from codexwatch.ui.app import AppConfig

    return AppConfig(
        codex_home=settings.codex_home,
        since_seconds=parse_duration(settings.since),
        status_url=settings.status_url,
        status_enabled=settings.status_enabled,
        status_interval=settings.status_interval,
        bell=settings.bell,
        notify=settings.notify,
        theme=settings.theme,
        use_cache=settings.use_cache,
        cache_dir=settings.cache_dir,
        home_problem=home_problem(settings.codex_home) if not settings.codex_home.exists() else None,
        runs_state_dir=settings.state_dir or default_state_dir(),
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    from codexwatch.ui.app import CodexWatchApp

    demo_mode = bool(getattr(args, "demo", False))
    while True:
        if demo_mode:
            from codexwatch.demo import Demo

            with Demo() as demo:
                config = demo.app_config(settings)
                result = CodexWatchApp(config).run()
        else:
            result = CodexWatchApp(app_config(args, settings)).run()
        if result == "demo" and not demo_mode:
            demo_mode = True
            continue
        break
    if isinstance(result, int):
        return result
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(argparse.Namespace(), Settings()))
