package oltpmy

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// clientExec runs each transaction as a sequence of server-side prepared
// statements inside START TRANSACTION ... COMMIT, one round trip per
// statement, as a client-side driver (go-tpc, BenchBase) does: oltppg's
// client mode in MariaDB's SQL. MariaDB has no UPDATE ... RETURNING, so
// a row updated and then read is read back by a second statement.
type clientExec struct{ *session }

// clientStatements are prepared once per session under these names.
var clientStatements = map[string]string{
	"nw_w":     "SELECT w_tax FROM warehouse WHERE w_id = ?",
	"nw_d_upd": "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
	"nw_d_sel": "SELECT d_tax, d_next_o_id - 1 FROM district WHERE d_w_id = ? AND d_id = ?",
	"nw_c":     "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	"nw_o": `INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (?, ?, ?, ?, NOW(), NULL, ?, ?)`,
	"nw_no": "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
	"nw_i":  "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
	// ELT picks the district's s_dist column, so one statement serves all ten.
	"nw_s_sel": `SELECT s_quantity, s_data, ELT(?, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05,
		s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10) FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE`,
	"nw_s_upd": `UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1,
		s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?`,
	"nw_ol": `INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
		ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`,

	"pm_w_upd": "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
	"pm_w_sel": "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
	"pm_d_upd": "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
	"pm_d_sel": "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
	"pm_c_sel": `SELECT c_first, c_middle, c_last, c_credit, c_balance, c_since FROM customer
		WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE`,
	"pm_c_bc": `UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?,
		c_payment_cnt = c_payment_cnt + 1, c_data = LEFT(CONCAT_WS(' ', ?, ?, ?, ?, ?, ?, '|', c_data), 500)
		WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`,
	"pm_c_upd": `UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?,
		c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`,
	"pm_h": `INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (?, ?, ?, ?, ?, NOW(), ?, ?)`,

	"c_count":   "SELECT count(*) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?",
	"c_by_name": "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first LIMIT ?, 1",

	"os_c": "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	"os_o": `SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?
		ORDER BY o_id DESC LIMIT 1`,
	"os_ol": `SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?`,

	"dl_no":     "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
	"dl_no_del": "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
	"dl_o_sel":  "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? FOR UPDATE",
	"dl_o_upd":  "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
	"dl_ol_sum": "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	"dl_ol_upd": "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	"dl_c": `UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1
		WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`,

	"sl_d": "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
	"sl_low": `SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ? AND s_i_id = ol_i_id
		WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? AND s_quantity < ?`,
}

// inTx runs f in a transaction, committing on success and rolling back on
// any error (InnoDB rolls back only the statement on a lock wait timeout);
// again when it lost a Galera conflict (retry).
func (e *clientExec) inTx(ctx context.Context, f func() error) error {
	return e.retry(func() error { return e.tx(ctx, f) })
}

func (e *clientExec) tx(ctx context.Context, f func() error) error {
	if _, err := e.conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return e.done(err)
	}
	if err := f(); err != nil {
		if _, rbErr := e.conn.ExecContext(ctx, "ROLLBACK"); rbErr != nil {
			_ = e.done(rbErr)
		}
		return e.done(err)
	}
	_, err := e.conn.ExecContext(ctx, "COMMIT")
	return e.done(err)
}

func (e *clientExec) row(ctx context.Context, name string, args ...any) *sql.Row {
	return e.stmts[name].QueryRowContext(ctx, args...)
}

func (e *clientExec) exec(ctx context.Context, name string, args ...any) error {
	_, err := e.stmts[name].ExecContext(ctx, args...)
	return err
}

func (e *clientExec) NewOrder(ctx context.Context, in *oltp.NewOrderInput) error {
	return e.inTx(ctx, func() error {
		var wTax, dTax, discount float64
		var oID int
		var cLast, credit string
		if err := e.row(ctx, "nw_w", in.W).Scan(&wTax); err != nil {
			return err
		}
		if err := e.exec(ctx, "nw_d_upd", in.W, in.D); err != nil {
			return err
		}
		if err := e.row(ctx, "nw_d_sel", in.W, in.D).Scan(&dTax, &oID); err != nil {
			return err
		}
		if err := e.row(ctx, "nw_c", in.W, in.D, in.C).Scan(&discount, &cLast, &credit); err != nil {
			return err
		}
		allLocal := 0
		if in.AllLocal {
			allLocal = 1
		}
		if err := e.exec(ctx, "nw_o", oID, in.D, in.W, in.C, len(in.ItemIDs), allLocal); err != nil {
			return err
		}
		if err := e.exec(ctx, "nw_no", oID, in.D, in.W); err != nil {
			return err
		}
		var total float64
		for i, item := range in.ItemIDs {
			var price float64
			var name, iData, sData, dist string
			var quantity int
			err := e.row(ctx, "nw_i", item).Scan(&price, &name, &iData)
			if errors.Is(err, sql.ErrNoRows) {
				return oltp.ErrRolledBack
			}
			if err != nil {
				return err
			}
			if err := e.row(ctx, "nw_s_sel", in.D, in.SupplyW[i], item).Scan(&quantity, &sData, &dist); err != nil {
				return err
			}
			qty := int(in.Qty[i])
			if quantity >= qty+10 {
				quantity -= qty
			} else {
				quantity += 91 - qty
			}
			remote := 0
			if int(in.SupplyW[i]) != in.W {
				remote = 1
			}
			if err := e.exec(ctx, "nw_s_upd", quantity, qty, remote, in.SupplyW[i], item); err != nil {
				return err
			}
			amount := float64(qty) * price
			if err := e.exec(ctx, "nw_ol", oID, in.D, in.W, i+1, item, in.SupplyW[i], qty, amount, dist); err != nil {
				return err
			}
			total += amount
		}
		_ = total * (1 - discount) * (1 + wTax + dTax)
		in.OID = oID
		return nil
	})
}

// customerByName finds the customer at position ceil(n/2), by first name,
// of those with the last name (clause 2.5.2.2).
func (e *clientExec) customerByName(ctx context.Context, w, d int, last string) (int, error) {
	var n int
	if err := e.row(ctx, "c_count", w, d, last).Scan(&n); err != nil {
		return 0, err
	}
	var id int
	err := e.row(ctx, "c_by_name", w, d, last, max((n+1)/2-1, 0)).Scan(&id)
	return id, err
}

func (e *clientExec) Payment(ctx context.Context, in *oltp.PaymentInput) error {
	amt := amount(in.AmountCents)
	return e.inTx(ctx, func() error {
		var wName, wStreet1, wStreet2, wCity, wState, wZip string
		var dName, dStreet1, dStreet2, dCity, dState, dZip string
		if err := e.exec(ctx, "pm_w_upd", amt, in.W); err != nil {
			return err
		}
		if err := e.row(ctx, "pm_w_sel", in.W).Scan(&wName, &wStreet1, &wStreet2, &wCity, &wState, &wZip); err != nil {
			return err
		}
		if err := e.exec(ctx, "pm_d_upd", amt, in.W, in.D); err != nil {
			return err
		}
		if err := e.row(ctx, "pm_d_sel", in.W, in.D).Scan(&dName, &dStreet1, &dStreet2, &dCity, &dState, &dZip); err != nil {
			return err
		}
		c := in.C
		if c == 0 {
			var err error
			if c, err = e.customerByName(ctx, in.CW, in.CD, in.CLast); err != nil {
				return err
			}
		}
		var first, middle, last, credit string
		var balance float64
		var since time.Time
		if err := e.row(ctx, "pm_c_sel", in.CW, in.CD, c).Scan(&first, &middle, &last, &credit, &balance, &since); err != nil {
			return err
		}
		var err error
		if credit == "BC" {
			err = e.exec(ctx, "pm_c_bc", amt, amt, c, in.CD, in.CW, in.D, in.W, amt, in.CW, in.CD, c)
		} else {
			err = e.exec(ctx, "pm_c_upd", amt, amt, in.CW, in.CD, c)
		}
		if err != nil {
			return err
		}
		in.PaidC = c
		return e.exec(ctx, "pm_h", c, in.CD, in.CW, in.D, in.W, amt, wName+"    "+dName)
	})
}

func (e *clientExec) OrderStatus(ctx context.Context, in *oltp.OrderStatusInput) error {
	return e.inTx(ctx, func() error {
		c := in.C
		if c == 0 {
			var err error
			if c, err = e.customerByName(ctx, in.W, in.D, in.CLast); err != nil {
				return err
			}
		}
		var balance float64
		var first, middle, last string
		if err := e.row(ctx, "os_c", in.W, in.D, c).Scan(&balance, &first, &middle, &last); err != nil {
			return err
		}
		var oID int
		var entry time.Time
		var carrier sql.NullInt64
		if err := e.row(ctx, "os_o", in.W, in.D, c).Scan(&oID, &entry, &carrier); err != nil {
			return err
		}
		rows, err := e.stmts["os_ol"].QueryContext(ctx, in.W, in.D, oID)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		return rows.Err()
	})
}

func (e *clientExec) Delivery(ctx context.Context, in *oltp.DeliveryInput) error {
	return e.inTx(ctx, func() error {
		in.Skipped = 0
		for d := 1; d <= tpcc.DistrictsPerWarehouse; d++ {
			var oID, cID int
			err := e.row(ctx, "dl_no", in.W, d).Scan(&oID)
			if errors.Is(err, sql.ErrNoRows) {
				in.Skipped++
				continue // no undelivered order in this district (clause 2.7.4.2)
			}
			if err != nil {
				return err
			}
			if err := e.exec(ctx, "dl_no_del", in.W, d, oID); err != nil {
				return err
			}
			if err := e.row(ctx, "dl_o_sel", in.W, d, oID).Scan(&cID); err != nil {
				return err
			}
			if err := e.exec(ctx, "dl_o_upd", in.Carrier, in.W, d, oID); err != nil {
				return err
			}
			var amount sql.NullString // exact, as the server sums it
			if err := e.row(ctx, "dl_ol_sum", in.W, d, oID).Scan(&amount); err != nil {
				return err
			}
			if err := e.exec(ctx, "dl_ol_upd", in.W, d, oID); err != nil {
				return err
			}
			if err := e.exec(ctx, "dl_c", amount, in.W, d, cID); err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *clientExec) StockLevel(ctx context.Context, in *oltp.StockLevelInput) error {
	return e.inTx(ctx, func() error {
		var next, low int
		if err := e.row(ctx, "sl_d", in.W, in.D).Scan(&next); err != nil {
			return err
		}
		return e.row(ctx, "sl_low", in.W, in.W, in.D, next-20, next, in.Threshold).Scan(&low)
	})
}
