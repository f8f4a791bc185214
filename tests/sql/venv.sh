#!/usr/bin/env bash
# The Python the SQL engine tests run (tests/sql_engines.rs): a virtualenv holding DuckDB,
# PySpark (Spark in local mode, on the machine's Java 17), sqlglot (Trino's grammar) and
# pyarrow, created on first use and kept between runs. Prints the interpreter's path on
# stdout; fails, saying why on stderr, when it cannot be made to work.
#
#     tests/sql/venv.sh            # venv at $TRACEDIAG_PY_VENV or ~/.cache/tracediag-py
set -euo pipefail
venv="${TRACEDIAG_PY_VENV:-$HOME/.cache/tracediag-py}"
# Pinned: a test's answer must not change because a registry moved on.
packages=(duckdb==2.0.1 pyspark==4.3.0 sqlglot==30.31.0 pyarrow==26.0.1)
check='import duckdb, pyspark, sqlglot, pyarrow
assert duckdb.__version__ == "2.0.1", duckdb.__version__
assert pyspark.__version__ == "4.3.0", pyspark.__version__'
# Tests run in parallel and may all ask at once on a new machine: one makes the venv,
# the others wait for it.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "tests/sql/venv.sh: installing ${packages[*]} into $venv (once)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q "${packages[@]}" >&2
  "$venv/bin/python" -c "$check" >&2
fi
if ! java -version 2>&1 | grep -q 'version "17'; then
  echo "tests/sql/venv.sh: Spark needs Java 17 (\`java -version\` shows: $(java -version 2>&1 | head -1))" >&2
  exit 1
fi
echo "$venv/bin/python"
