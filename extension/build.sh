#!/usr/bin/env bash
# Rebuild the JupyterLab extension into paddle_nb/labextension/ (committed: users never
# need node). Needs node >= 18 and npm, and the project's .venv (JupyterLab's own
# package.json, its "core", says which versions of JupyterLab's packages the extension
# shares with the page). Then reinstall the package (pip install -e ".[notebook]") so the
# copy in <venv>/share/jupyter/labextensions is the new one.
set -euo pipefail
cd "$(dirname "$0")"
python=${PYTHON:-../.venv/bin/python}
core=$("$python" -c 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging"))')
npm ci --no-audit --no-fund
npx tsc
node node_modules/@jupyterlab/builder/lib/build-labextension.js --core-path "$core" .
