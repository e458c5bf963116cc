package nullserver

import (
	"strings"
)

// Type OIDs of the columns and parameters the null server declares. It
// answers numeric columns as float8, which pgx scans into float64 alike.
const (
	oidBool    = 16
	oidInt8    = 20
	oidInt4    = 23
	oidText    = 25
	oidFloat8  = 701
	oidInt4Arr = 1007
	oidInt8Arr = 1016
	oidF8Arr   = 1022
	oidNumeric = 1700
	oidVoid    = 2278
)

// kind is what a statement does, as the null server plays it.
type kind int

const (
	kNone kind = iota // answers its tag and no rows
	kBegin
	kCommit
	kRollback
	kConst // one row of consts
	kCounters
	kBuildInfo
	kProcNewOrder
	kProcPayment
	kProcDelivery
	kDistrictNext // client New-Order: the district's next order id
	kItems        // client New-Order: the items found
	kOrderStatus  // client Order-Status: the customer's lines
)

type col struct {
	name string
	oid  uint32
}

// stmt is a statement the null server recognises by a fragment of its
// text: its parameters' types, its result columns, and what it does.
type stmt struct {
	match  string
	params []uint32
	cols   []col
	kind   kind
	consts []any
	tag    string
}

var i4 = func(n int) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = oidInt4
	}
	return p
}

// catalog is every statement calibra sends to PostgreSQL in a run: the
// session setup and control reads, procedures mode's prepared calls and
// client mode's statements. The first match wins, so longer fragments
// come before the fragments they contain.
var catalog = []stmt{
	// Procedures mode (oltppg.procStatements).
	{match: "tpcc_new_order(", params: append(i4(4), oidInt4Arr, oidInt4Arr, oidInt4Arr), cols: []col{{"tpcc_new_order", oidInt4}}, kind: kProcNewOrder, tag: "SELECT 1"},
	{match: "tpcc_payment(", params: append(i4(5), oidText, oidInt4), cols: []col{{"tpcc_payment", oidInt4}}, kind: kProcPayment, tag: "SELECT 1"},
	{match: "tpcc_order_status(", params: append(i4(3), oidText), cols: []col{{"tpcc_order_status", oidInt4}}, kind: kConst, consts: []any{int64(10)}, tag: "SELECT 1"},
	{match: "tpcc_delivery(", params: i4(2), cols: []col{{"tpcc_delivery", oidInt4}}, kind: kProcDelivery, tag: "SELECT 1"},
	{match: "tpcc_stock_level(", params: i4(3), cols: []col{{"tpcc_stock_level", oidInt4}}, kind: kConst, consts: []any{int64(7)}, tag: "SELECT 1"},
	{match: "pg_stat_force_next_flush()", cols: []col{{"pg_stat_force_next_flush", oidVoid}}, kind: kConst, consts: []any{""}, tag: "SELECT 1"},
	// Setup and control (postgres.Describe, oltppg.control).
	{match: "SHOW server_version", cols: []col{{"server_version", oidText}}, kind: kConst, consts: []any{"16.0 (calibra null server)"}, tag: "SHOW"},
	{match: "FROM pg_settings", cols: []col{{"name", oidText}, {"current_setting", oidText}}, tag: "SELECT 0"},
	{match: "server_version_num", cols: []col{{"current_setting", oidInt4}}, kind: kConst, consts: []any{int64(160000)}, tag: "SELECT 1"},
	// The connections a --dsn server has free (postgres.Prepare): plenty.
	{match: "current_setting('max_connections')", cols: []col{{"?column?", oidInt4}}, kind: kConst, consts: []any{int64(10000)}, tag: "SELECT 1"},
	{match: "to_regclass($1)", params: []uint32{oidText}, cols: []col{{"?column?", oidBool}}, kind: kConst, consts: []any{true}, tag: "SELECT 1"},
	{match: "FROM build_info", cols: []col{{"key", oidText}, {"value", oidText}}, kind: kBuildInfo},
	{match: "SELECT (SELECT sum(d_next_o_id) FROM district), xact_commit", kind: kCounters, tag: "SELECT 1",
		cols: []col{{"sum", oidInt8}, {"?column?", oidInt8}, {"?column?", oidInt8}, {"coalesce", oidInt8},
			{"array_agg", oidInt8Arr}, {"array_agg", oidInt8Arr}, {"array_agg", oidInt8Arr}, {"count", oidInt8}}},
	{match: "CHECKPOINT", tag: "CHECKPOINT"},
	// Client mode (oltppg.clientExec).
	{match: "BEGIN", kind: kBegin, tag: "BEGIN"},
	{match: "COMMIT", kind: kCommit, tag: "COMMIT"},
	{match: "ROLLBACK", kind: kRollback, tag: "ROLLBACK"},
	{match: "SELECT w_tax FROM warehouse", params: i4(1), cols: []col{{"w_tax", oidFloat8}}, kind: kConst, consts: []any{0.1}, tag: "SELECT 1"},
	{match: "UPDATE district SET d_next_o_id", params: i4(2), cols: []col{{"d_tax", oidFloat8}, {"?column?", oidInt4}}, kind: kDistrictNext, tag: "UPDATE 1"},
	{match: "SELECT c_discount, c_last, c_credit FROM customer", params: i4(3), kind: kConst, tag: "SELECT 1",
		cols: []col{{"c_discount", oidFloat8}, {"c_last", oidText}, {"c_credit", oidText}}, consts: []any{0.05, "BARBARBAR", "GC"}},
	{match: "FROM item WHERE i_id = ANY($1)", params: []uint32{oidInt4Arr}, kind: kItems,
		cols: []col{{"i_id", oidInt4}, {"i_price", oidFloat8}, {"i_name", oidText}, {"i_data", oidText}}},
	{match: "INSERT INTO orders", params: i4(6), tag: "INSERT 0 1"},
	{match: "INSERT INTO new_order", params: i4(3), tag: "INSERT 0 1"},
	{match: "WITH s AS (UPDATE stock", params: append(i4(3), oidInt4Arr, oidInt4Arr, oidInt4Arr, oidInt4Arr, oidF8Arr, oidInt4Arr, oidInt4Arr, oidInt4Arr), tag: "INSERT 0 10"},
	{match: "UPDATE stock s SET", params: i4(4), tag: "UPDATE 1"},
	{match: "ORDER BY c_first", params: paymentOrStatus(oidText), tag: "SELECT 1"}, // by name: see lookup
	{match: "WITH w AS (UPDATE warehouse", params: paymentOrStatus(oidInt4), cols: []col{{"h_c_id", oidInt4}}, kind: kConst, consts: []any{int64(1)}, tag: "INSERT 0 1"},
	{match: "WITH c AS (SELECT c_id, c_balance", params: i4(3), kind: kOrderStatus, cols: orderStatusCols},
	{match: "WITH n AS (DELETE FROM new_order", params: i4(2), cols: []col{{"count", oidInt8}, {"count", oidInt8}}, kind: kConst, consts: []any{int64(10), int64(10)}, tag: "SELECT 1"},
	{match: "SELECT count(DISTINCT s_i_id)", params: i4(3), cols: []col{{"count", oidInt8}}, kind: kConst, consts: []any{int64(7)}, tag: "SELECT 1"},
	// The consistency conditions after a run (oltp.consistencyChecks): none
	// violated.
	{match: "SELECT count(*) FROM", cols: []col{{"count", oidInt8}}, kind: kConst, consts: []any{int64(0)}, tag: "SELECT 1"},
}

// paymentOrStatus is a Payment's parameters with the customer ($3) of
// type who; $6 the amount.
func paymentOrStatus(who uint32) []uint32 {
	return []uint32{oidInt4, oidInt4, who, oidInt4, oidInt4, oidNumeric}
}

var orderStatusCols = []col{{"c_balance", oidFloat8}, {"c_first", oidText}, {"c_middle", oidText}, {"c_last", oidText},
	{"o_id", oidInt4}, {"o_entry_d", oidText}, {"o_carrier_id", oidInt4}, {"ol_i_id", oidInt4}, {"ol_supply_w_id", oidInt4},
	{"ol_quantity", oidInt4}, {"ol_amount", oidFloat8}, {"ol_delivery_d", oidText}}

// lookup finds the statement of sql, or nil. A statement selecting the
// customer by last name is the Payment's or the Order-Status' with a text
// third parameter.
func lookup(sql string) *stmt {
	for i := range catalog {
		s := &catalog[i]
		if !strings.Contains(sql, s.match) {
			continue
		}
		if s.match == "ORDER BY c_first" {
			return byName(sql)
		}
		return s
	}
	return nil
}

func byName(sql string) *stmt {
	for i := range catalog {
		s := catalog[i]
		if s.match != "ORDER BY c_first" && strings.Contains(sql, s.match) {
			p := append([]uint32(nil), s.params...)
			p[2] = oidText
			s.params = p
			return &s
		}
	}
	return nil
}
