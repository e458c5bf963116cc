package oltpmy

// consistencySQL counts, for each consistency condition (clauses 3.3.2.1
// to 3.3.2.4), the warehouses or districts that violate it: oltppg's
// queries with MariaDB's null-safe <=> for IS NOT DISTINCT FROM, and the
// full join of 3.3.2.4 as a left join each way.
var consistencySQL = map[string]string{
	"3.3.2.1": `SELECT count(*) FROM warehouse w
		 LEFT JOIN (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
		 WHERE NOT (w.w_ytd <=> d.ytd)`,
	"3.3.2.2": `SELECT count(*) FROM district d
		 LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) AS m FROM orders GROUP BY o_w_id, o_d_id) o
		   ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
		 LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS m FROM new_order GROUP BY no_w_id, no_d_id) n
		   ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
		 WHERE NOT (d.d_next_o_id - 1 <=> o.m) OR (n.m IS NOT NULL AND n.m <> o.m)`,
	"3.3.2.3": `SELECT count(*) FROM (SELECT max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n
		 FROM new_order GROUP BY no_w_id, no_d_id) x WHERE span <> n`,
	"3.3.2.4": `SELECT
		 (SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o
		   LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) l
		   ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
		   WHERE NOT (o.s <=> l.c)) +
		 (SELECT count(*) FROM (SELECT DISTINCT ol_w_id, ol_d_id FROM order_line) l
		   WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = l.ol_w_id AND o_d_id = l.ol_d_id))`,
}
