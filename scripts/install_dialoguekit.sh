#!/usr/bin/env bash
# Installs DialogueKit (the toolkit UserSimCRS builds on) for the tests that read and write its
# files and drive examples/dialoguekit_agent.py.
#
# Why not `pip install dialoguekit`: its declared dependencies (websockets<11, Flask-SocketIO, ...)
# serve its chat platforms, which nothing here uses, and would pin websockets below what the
# arena's web stack may want; its wheel also ships top-level `tests`, `docs` and `conftest.py`
# that would shadow this project's own `tests` package. So only the `dialoguekit` package is put
# on the path: the reader and the participant classes need nothing beyond PyYAML, which the
# arena already requires.
set -euo pipefail
VERSION="${DIALOGUEKIT_VERSION:-0.1.1}"
PYTHON="${PYTHON:-python}"
purelib="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
target="$purelib/_dialoguekit_only"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
"$PYTHON" -m pip install -q --no-deps --target "$staging" "dialoguekit==$VERSION"
rm -rf "$target"
mkdir -p "$target"
cp -r "$staging/dialoguekit" "$target/"
echo "$target" > "$purelib/_dialoguekit_only.pth"
"$PYTHON" -c "import dialoguekit.utils.dialogue_reader, dialoguekit.participant; print('dialoguekit $VERSION: ok')"
