#!/usr/bin/env bash
# Installs code-server (VS Code served to a browser) into an ignored tools folder, offline-safe:
# - code-server 4.100.3 is the newest release that accepts Node 20;
# - its @vscode/ripgrep dependency would download ripgrep from the network, so its download
#   cache is seeded with Debian's ripgrep binary, packed under the asset name it looks for;
# - npm 11 may skip dependency install scripts, and code-server's postinstall builds VS Code's
#   native modules, so scripts are allowed for this one install only.
# Kept out of the project's own dependencies: only the e2e suite needs it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="${WAP_TOOLS_DIR:-$root/.tools}"
prefix="$tools/code-server"
bin="$prefix/node_modules/.bin/code-server"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
  echo "code-server already installed: $("$bin" --version | head -1)"
  exit 0
fi
command -v rg >/dev/null || { echo "install-code-server: Debian's ripgrep is required (apt-get install -y ripgrep)" >&2; exit 1; }
[ -e /usr/include/krb5.h ] || [ -e /usr/include/gssapi/gssapi.h ] || { echo "install-code-server: libkrb5-dev is required (apt-get install -y libkrb5-dev)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rg_pkg_version=1.15.11
rg_asset=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
mkdir -p "$tmp/vscode-ripgrep-cache-$rg_pkg_version" "$tmp/rgpack"
cp "$(command -v rg)" "$tmp/rgpack/rg"
tar -czf "$tmp/vscode-ripgrep-cache-$rg_pkg_version/$rg_asset" -C "$tmp/rgpack" rg

mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name":"wap-e2e-tools","private":true}' > "$prefix/package.json"
TMPDIR="$tmp" \
npm_config_unsafe_perm=true \
npm_config_yes=true \
npm_config_nodedir=/usr \
npm_config_dangerously_allow_all_scripts=true \
npm_config_audit=false \
npm_config_fund=false \
  npm install --prefix "$prefix" --no-save --foreground-scripts=false code-server@4.100.3
"$bin" --version | head -1
