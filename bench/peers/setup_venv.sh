#!/usr/bin/env bash
# Create (or reuse) bench/.peers-venv, the virtual environment holding the peer
# LDP libraries that bench/peers/run_peers.py benchmarks against ldpnum.
#
# Idempotent: a stamp file inside the venv records the sha256 of
# bench/peers/requirements.txt and the interpreter version; when both match,
# nothing is reinstalled.  When they differ the venv is rebuilt from scratch.
# Needs only python3 and access to PyPI.  Prints exactly one line on success;
# on failure prints the tail of the install log to stderr and exits non-zero.
#
# Environment: PYTHON (interpreter to base the venv on, default python3),
#              PEERS_VENV (venv directory, default <repo>/bench/.peers-venv).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench_dir="$(dirname "$here")"
req="$here/requirements.txt"
venv="${PEERS_VENV:-$bench_dir/.peers-venv}"
py="${PYTHON:-python3}"
stamp="$venv/.requirements.stamp"
log="$venv/install.log"

command -v "$py" >/dev/null 2>&1 || { echo "setup_venv: $py not found" >&2; exit 1; }

key="$("$py" - "$req" <<'PY'
import hashlib, sys
with open(sys.argv[1], "rb") as fh:
    digest = hashlib.sha256(fh.read()).hexdigest()
print(f"{digest} py{sys.version_info[0]}.{sys.version_info[1]}")
PY
)"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$key" ]]; then
    echo "peers venv up to date: $venv"
    exit 0
fi

fail() {
    echo "setup_venv: $1 (log: $log)" >&2
    [[ -f "$log" ]] && tail -n 30 "$log" >&2
    exit 1
}

# Fresh venv.  Fall back to a throw-away virtualenv when the stdlib venv module
# lacks ensurepip (e.g. Debian without python3-venv).
if [[ -e "$venv" && ! -f "$venv/pyvenv.cfg" ]]; then
    echo "setup_venv: $venv exists and is not a virtual environment; refusing to replace it" >&2
    exit 1
fi
rm -rf "$venv"
tmp_log="$(mktemp)"
if ! "$py" -m venv "$venv" >"$tmp_log" 2>&1; then
    rm -rf "$venv"
    venv_tools="$(mktemp -d)"
    if ! "$py" -m pip install -q --disable-pip-version-check --target "$venv_tools" virtualenv >>"$tmp_log" 2>&1 \
        || ! PYTHONPATH="$venv_tools" "$py" -m virtualenv -q "$venv" >>"$tmp_log" 2>&1; then
        cat "$tmp_log" >&2
        rm -rf "$venv_tools" "$tmp_log"
        echo "setup_venv: cannot create a virtual environment with $py" \
             "(install python3-venv or pip)" >&2
        exit 1
    fi
    rm -rf "$venv_tools"
fi
mv "$tmp_log" "$log"

vpy="$venv/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
"$vpy" -m pip install --upgrade pip >>"$log" 2>&1 || fail "pip upgrade failed"
"$vpy" -m pip install -r "$req" >>"$log" 2>&1 || fail "installing $req failed"

# Every peer must import, or the benchmark would silently lose a column.
versions="$("$vpy" - 2>>"$log" <<'PY'
import warnings
from importlib.metadata import version
warnings.simplefilter("ignore")
from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer  # noqa: F401
from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client  # noqa: F401
from ldp_toolbox.protocols.frequency.grr import GeneralizedRandomizedResponse  # noqa: F401
print(", ".join(f"{d} {version(d)}" for d in ("pure-ldp", "multi-freq-ldpy", "ldp-toolbox")))
PY
)" || fail "peer import check failed"

echo "$key" >"$stamp"
echo "peers venv ready: $venv ($versions)"
