# Sourced by the device scripts: moves to the repository root (ROOT) and puts DuckDB, from .duck
# (carried with the call: duckq and libduckdb.so.xz), in .peers on the library path.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
mkdir -p .peers
cp .duck/duckq .peers/ && xz -dkc .duck/libduckdb.so.xz >.peers/libduckdb.so
export LD_LIBRARY_PATH=$ROOT/.peers
