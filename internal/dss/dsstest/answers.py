"""Prints DuckDB's answers to its own 22 TPC-H queries (the validation
parameters) over the CSV files tpchgen-cli wrote in a directory, as JSON:
{"1": [[field, ...], ...], ...}, NULL as "".

The independent engine of calibra's query check. It runs on the same data as
PostgreSQL because DuckDB's built-in generator differs from dbgen in the
address columns and in some comments, so its published answers do not hold
for dbgen's data. The tpch extension loads offline from the
duckdb-extension-tpch package's file.
"""
import glob
import json
import os
import sys

import duckdb
import duckdb_extension_tpch

csvdir = sys.argv[1]
ext = glob.glob(os.path.join(os.path.dirname(duckdb_extension_tpch.__file__), "extensions", "*", "tpch.duckdb_extension"))
if not ext:
    sys.exit("duckdb-extension-tpch ships no tpch.duckdb_extension file")
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext[0]}'")
con.execute("CALL dbgen(sf = 0)")  # the eight tables with the specification's types, empty
for table in ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]:
    con.execute(f"COPY {table} FROM '{os.path.join(csvdir, table + '.csv')}' (HEADER)")


def text(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


out = {}
for q, sql in con.execute("SELECT query_nr, query FROM tpch_queries()").fetchall():
    out[str(q)] = [[text(v) for v in row] for row in con.execute(sql).fetchall()]
json.dump(out, sys.stdout)
