"""`crs-arena`: one command line for the whole arena.

    crs-arena prepare                             one-time set-up: the local model's conversion
    crs-arena serve [--host H --port P ...]       the web app (also `python app.py`)
    crs-arena simulate run|list|runs ...          simulated evaluation runs (also `python -m simulators`)
    crs-arena export|import ...                   the rated corpus (also `python -m arena.corpus`)
    crs-arena score|meta|recall|ratings ...       metrics and meta-evaluation (also `python -m evaluators`)
    crs-arena reply|download|systems|serve-crs    the systems (also `python -m crs`)

Each subcommand hands its arguments, unchanged, to the module command line that
implements it, so the `python -m ...` forms stay the same commands, and an
option or subcommand added there is available here without a change.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Optional, Sequence

from arena.runtime.config import offline_model_environment


@dataclass(frozen=True)
class Command:
    module: str  # a module with `main(argv)`
    prefix: tuple[str, ...]  # put before the user's arguments (the module's own subcommand)
    help: str
    offline_hub: bool = False  # set HF_HUB_OFFLINE=1 (unless set), as `python -m evaluators` does

    def alias(self) -> str:
        package = self.module.removesuffix(".__main__").removesuffix(".cli")
        names = {"webapp.serve": "python app.py", "webapp.runs.cli": "python -m simulators",
                 "arena.runtime.prepare": "python -m arena.runtime.prepare"}
        return names.get(self.module) or " ".join(["python -m", package, *self.prefix])


COMMANDS: dict[str, Command] = {
    "prepare": Command("arena.runtime.prepare", (), "one-time set-up: convert the local model (part of the set-up)",
                       offline_hub=True),
    "serve": Command("webapp.serve", (), "start the web app"),
    "simulate": Command("webapp.runs.cli", (), "simulated evaluation runs: run, list, runs"),
    "export": Command("arena.corpus.cli", ("export",), "export the rated corpus, votes, scores and a dataset card"),
    "import": Command("arena.corpus.cli", ("import",), "load a corpus file into the database"),
    "score": Command("evaluators.cli", ("score",), "annotate dialogue acts and score dialogues from a file",
                     offline_hub=True),
    "meta": Command("evaluators.cli", ("meta",), "meta-evaluation: metrics against user satisfaction",
                    offline_hub=True),
    "recall": Command("evaluators.cli", ("recall",), "Recall@k of the recommenders on held-out dialogues",
                      offline_hub=True),
    "ratings": Command("evaluators.cli", ("ratings",), "aspect ratings: import and correlate", offline_hub=True),
    "reply": Command("crs.__main__", ("reply",), "one reply of a system to a message"),
    "download": Command("crs.__main__", ("download",), "download system checkpoints (and base models)"),
    "systems": Command("crs.__main__", ("list",), "which systems have their files"),
    "serve-crs": Command("crs.__main__", ("serve-crs",), "serve a system over the HTTP contract"),
}


def usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [
        "usage: crs-arena COMMAND [ARGS...]   (crs-arena COMMAND --help for a command's options)",
        "",
        "Chat with, rate and compare conversational recommender systems; score and meta-evaluate dialogues.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {cmd.help}  [{cmd.alias()}]" for name, cmd in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    name, rest = args[0], args[1:]
    command = COMMANDS.get(name)
    if command is None:
        print(f"crs-arena: unknown command {name!r}; choose one of {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    if command.offline_hub:
        offline_model_environment()
    if name == "serve" and argv is None:  # the server itself, not a call from Python
        from webapp.memory_allocator import restart_on_system_allocator

        restart_on_system_allocator()
    module = importlib.import_module(command.module)
    return int(module.main([*command.prefix, *rest]) or 0)


if __name__ == "__main__":
    sys.exit(main())
