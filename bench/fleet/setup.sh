#!/usr/bin/env bash
# bench/fleet/setup.sh: install the fleet benchmark's peers the way their users
# do, from the npm registry into bench/fleet/node_modules.
#
# Versions are pinned in package.json to the newest releases whose "engines"
# accept Debian 12's Node 20: graphile-worker 0.18 wants node >=22.18 and
# pg-boss 11+ wants node >=22, so Node 20 gets graphile-worker 0.17.3 and
# pg-boss 10.4.2. With package-lock.json present, `npm ci` installs exactly the
# locked tree; without it, `npm install` resolves and writes the lock.
# Idempotent: nothing is fetched when node_modules already matches the lock.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$HERE"

command -v node >/dev/null || { echo "setup: node not found (apt-get install nodejs npm)" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup: npm not found (apt-get install npm)" >&2; exit 1; }

# npm writes .package-lock.json inside node_modules after a complete install;
# if it matches the committed lock there is nothing to do.
if [[ -f package-lock.json && -f node_modules/.package-lock.json ]] &&
	node -e '
		const a = require("./package-lock.json").packages, b = require("./node_modules/.package-lock.json").packages;
		const ver = (p) => Object.fromEntries(Object.entries(p).filter(([k]) => k).map(([k, v]) => [k, v.version]));
		process.exit(JSON.stringify(ver(a)) === JSON.stringify(ver(b)) ? 0 : 1);' 2>/dev/null; then
	echo "setup: node_modules already matches package-lock.json"
elif [[ -f package-lock.json ]]; then
	npm ci --no-audit --no-fund --loglevel=error
else
	npm install --no-audit --no-fund --loglevel=error
fi

# Print what is installed (the versions actually loaded, not what package.json asks for).
node -e '
	for (const p of ["graphile-worker", "pg-boss", "pg"])
		console.log("setup: " + p + " " + require("./node_modules/" + p + "/package.json").version);
	console.log("setup: node " + process.versions.node);'
