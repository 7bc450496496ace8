#!/usr/bin/env bash
# The single-file client (issue: a client in one file): builds dist/lading with
# `npm run build:client`, then runs the client test suite against it with no Node on PATH —
# a `node` that fails stands first on PATH, so any use of one fails the tests — while the
# servers and admin commands the tests start run from bin/lading as always.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build:client
nonode=$(mktemp -d)
trap 'rm -rf "$nonode"' EXIT
printf '#!/bin/sh\necho "node was run from PATH ($0 $*): the single-file client must need none" >&2\nexit 127\n' > "$nonode/node"
chmod +x "$nonode/node"
# NOTE: the outage test waits out a 40-s server stop and the terminal tests drive tmux: they run
# in the main suite; these cover every client command and both transfer directions.
PATH="$nonode:$PATH" LADING_TEST_CLIENT_BIN="$PWD/dist/lading" \
  node_modules/.bin/node --disable-warning=ExperimentalWarning --test \
  test/client/client-commands.test.ts test/client/device-login.test.ts test/client/owner-commands.test.ts \
  test/client/pipes.test.ts test/client/transfer.test.ts test/client/transfer-resume.test.ts \
  test/client/transfer-integrity.test.ts test/client/transfer-archive.test.ts test/client/transfer-busy.test.ts \
  test/client/transfer-changing.test.ts test/client/transfer-choices.test.ts
