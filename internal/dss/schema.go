package dss

import "math"

// Schema holds the TPC-H-like tables, apart from the TPC-C-like schema so
// both layers can live in one database.
const Schema = "calibra_tpch"

// Workload names the TPC-H-derived workload in results; it is not TPC-H and
// its numbers are not comparable with published TPC-H results.
const Workload = "tpch-like (TPC-H-derived, not comparable with published TPC-H results)"

// table is one of the eight TPC-H tables.
type table struct {
	name    string
	columns string  // the DDL column list, in the generator's column order
	base    float64 // rows at scale factor 1; 0 for the fixed tables
	fixed   int64   // rows of nation and region at any scale factor
	bytes   float64 // CSV bytes at scale factor 1, to cut it into parts
}

// tables are in the order of the specification (clause 1.4). Text columns are
// varchar: PostgreSQL stores and compares them at least as fast as char(n).
var tables = []table{
	{name: "region", fixed: 5, columns: `r_regionkey integer NOT NULL, r_name varchar(25) NOT NULL, r_comment varchar(152) NOT NULL`},
	{name: "nation", fixed: 25, columns: `n_nationkey integer NOT NULL, n_name varchar(25) NOT NULL, n_regionkey integer NOT NULL, n_comment varchar(152) NOT NULL`},
	{name: "supplier", base: 10_000, bytes: 1.4e6, columns: `s_suppkey integer NOT NULL, s_name varchar(25) NOT NULL, s_address varchar(40) NOT NULL,
		s_nationkey integer NOT NULL, s_phone varchar(15) NOT NULL, s_acctbal numeric(15,2) NOT NULL, s_comment varchar(101) NOT NULL`},
	{name: "customer", base: 150_000, bytes: 24e6, columns: `c_custkey integer NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL,
		c_nationkey integer NOT NULL, c_phone varchar(15) NOT NULL, c_acctbal numeric(15,2) NOT NULL, c_mktsegment varchar(10) NOT NULL,
		c_comment varchar(117) NOT NULL`},
	{name: "part", base: 200_000, bytes: 24e6, columns: `p_partkey integer NOT NULL, p_name varchar(55) NOT NULL, p_mfgr varchar(25) NOT NULL,
		p_brand varchar(10) NOT NULL, p_type varchar(25) NOT NULL, p_size integer NOT NULL, p_container varchar(10) NOT NULL,
		p_retailprice numeric(15,2) NOT NULL, p_comment varchar(23) NOT NULL`},
	{name: "partsupp", base: 800_000, bytes: 118e6, columns: `ps_partkey integer NOT NULL, ps_suppkey integer NOT NULL, ps_availqty integer NOT NULL,
		ps_supplycost numeric(15,2) NOT NULL, ps_comment varchar(199) NOT NULL`},
	{name: "orders", base: 1_500_000, bytes: 170e6, columns: `o_orderkey bigint NOT NULL, o_custkey integer NOT NULL, o_orderstatus char(1) NOT NULL,
		o_totalprice numeric(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority varchar(15) NOT NULL, o_clerk varchar(15) NOT NULL,
		o_shippriority integer NOT NULL, o_comment varchar(79) NOT NULL`},
	{name: "lineitem", bytes: 766e6, columns: `l_orderkey bigint NOT NULL, l_partkey integer NOT NULL, l_suppkey integer NOT NULL,
		l_linenumber integer NOT NULL, l_quantity numeric(15,2) NOT NULL, l_extendedprice numeric(15,2) NOT NULL,
		l_discount numeric(15,2) NOT NULL, l_tax numeric(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL,
		l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL, l_shipinstruct varchar(25) NOT NULL,
		l_shipmode varchar(10) NOT NULL, l_comment varchar(44) NOT NULL`},
}

// indexDDL are the primary keys and the indexes the queries' correlated
// subqueries need (Q17 and Q20 on lineitem's part, Q22 and Q13 on the
// order's customer), built after the load. Foreign keys are left out: they
// only cost load time, PostgreSQL's planner does not use them.
var indexDDL = []string{
	"ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)",
	"CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)",
	"ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)",
	"CREATE INDEX orders_cust ON orders (o_custkey)",
	"ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)",
	"ALTER TABLE part ADD PRIMARY KEY (p_partkey)",
	"ALTER TABLE customer ADD PRIMARY KEY (c_custkey)",
	"ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)",
	"ALTER TABLE nation ADD PRIMARY KEY (n_nationkey)",
	"ALTER TABLE region ADD PRIMARY KEY (r_regionkey)",
}

// lineitemRows are lineitem's row counts at the scale factors the
// specification and dbgen publish; lineitem is not a fixed multiple of the
// scale factor (each order has 1 to 7 lines).
var lineitemRows = map[float64]int64{
	0.01: 60_175, 0.1: 600_572, 1: 6_001_215, 10: 59_986_052, 30: 179_998_372,
	100: 600_037_902, 300: 1_799_989_091, 1000: 5_999_989_709,
}

// expectedRows is the specification's row count of a table at a scale
// factor (clause 4.2.5), or false where only a measurement can say
// (lineitem at an unpublished scale factor).
func (t table) expectedRows(sf float64) (int64, bool) {
	switch {
	case t.fixed > 0:
		return t.fixed, true
	case t.base > 0:
		return int64(math.Floor(t.base*sf + 1e-9)), true
	}
	n, ok := lineitemRows[sf]
	return n, ok
}
