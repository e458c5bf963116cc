package oltppg

import (
	"context"
	"errors"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// simpleExec runs each transaction as a sequence of prepared statements
// inside BEGIN ... COMMIT, one round trip per statement, as a client-side
// driver (go-tpc, BenchBase) does: ModeClientSimple. pgx prepares each text
// once per connection and reuses it.
type simpleExec struct{ session }

// inTx runs f in a transaction, committing on success and rolling back on
// any error.
func (e *simpleExec) inTx(ctx context.Context, f func(tx pgx.Tx) error) error {
	tx, err := e.conn.Begin(ctx)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}

func (e *simpleExec) NewOrder(ctx context.Context, in *oltp.NewOrderInput) error {
	return e.inTx(ctx, func(tx pgx.Tx) error {
		var wTax, dTax, discount float64
		var oID int
		var cLast, credit string
		if err := tx.QueryRow(ctx, "SELECT w_tax FROM warehouse WHERE w_id = $1", in.W).Scan(&wTax); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2
			RETURNING d_tax, d_next_o_id - 1`, in.W, in.D).Scan(&dTax, &oID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT c_discount, c_last, c_credit FROM customer
			WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`, in.W, in.D, in.C).Scan(&discount, &cLast, &credit); err != nil {
			return err
		}
		allLocal := 0
		if in.AllLocal {
			allLocal = 1
		}
		if _, err := tx.Exec(ctx, `INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
			VALUES ($1, $2, $3, $4, now(), NULL, $5, $6)`, oID, in.D, in.W, in.C, len(in.ItemIDs), allLocal); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)", oID, in.D, in.W); err != nil {
			return err
		}
		distCol := distColumn(in.D)
		var total float64
		for i, item := range in.ItemIDs {
			var price float64
			var name, iData, sData, dist string
			err := tx.QueryRow(ctx, "SELECT i_price, i_name, i_data FROM item WHERE i_id = $1", item).Scan(&price, &name, &iData)
			if errors.Is(err, pgx.ErrNoRows) {
				return oltp.ErrRolledBack
			}
			if err != nil {
				return err
			}
			remote := 0
			if int(in.SupplyW[i]) != in.W {
				remote = 1
			}
			if err := tx.QueryRow(ctx, `UPDATE stock SET
				s_quantity = CASE WHEN s_quantity >= $1 + 10 THEN s_quantity - $1 ELSE s_quantity - $1 + 91 END,
				s_ytd = s_ytd + $1, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $2
				WHERE s_w_id = $3 AND s_i_id = $4 RETURNING s_data, `+distCol,
				in.Qty[i], remote, in.SupplyW[i], item).Scan(&sData, &dist); err != nil {
				return err
			}
			amount := float64(in.Qty[i]) * price
			if _, err := tx.Exec(ctx, `INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,
				ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
				VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)`,
				oID, in.D, in.W, i+1, item, in.SupplyW[i], in.Qty[i], amount, dist); err != nil {
				return err
			}
			total += amount
		}
		_ = total * (1 - discount) * (1 + wTax + dTax)
		in.OID = oID
		return nil
	})
}

var distColumns = [...]string{"s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
	"s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10"}

func distColumn(d int) string { return distColumns[d-1] }

// customerByName finds the customer at position ceil(n/2), by first name,
// of those with the last name (clause 2.5.2.2).
func customerByName(ctx context.Context, tx pgx.Tx, w, d int, last string) (int, error) {
	var n int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3",
		w, d, last).Scan(&n); err != nil {
		return 0, err
	}
	var id int
	err := tx.QueryRow(ctx, `SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
		ORDER BY c_first OFFSET $4 LIMIT 1`, w, d, last, (n+1)/2-1).Scan(&id)
	return id, err
}

func (e *simpleExec) Payment(ctx context.Context, in *oltp.PaymentInput) error {
	amount := pgtype.Numeric{Int: bigInt(in.AmountCents), Exp: -2, Valid: true}
	return e.inTx(ctx, func(tx pgx.Tx) error {
		var wName, dName, credit string
		if err := tx.QueryRow(ctx, `UPDATE warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2
			RETURNING w_name`, amount, in.W).Scan(&wName); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3
			RETURNING d_name`, amount, in.W, in.D).Scan(&dName); err != nil {
			return err
		}
		c := in.C
		if c == 0 {
			var err error
			if c, err = customerByName(ctx, tx, in.CW, in.CD, in.CLast); err != nil {
				return err
			}
		}
		var first, middle, last string
		var balance float64
		var since time.Time
		if err := tx.QueryRow(ctx, `SELECT c_first, c_middle, c_last, c_credit, c_balance, c_since FROM customer
			WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 FOR UPDATE`, in.CW, in.CD, c).Scan(
			&first, &middle, &last, &credit, &balance, &since); err != nil {
			return err
		}
		if credit == "BC" {
			if _, err := tx.Exec(ctx, `UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1,
				c_payment_cnt = c_payment_cnt + 1,
				c_data = left($2::int || ' ' || $3::int || ' ' || $4::int || ' ' || $5::int || ' ' || $6::int || ' ' || $1 || ' | ' || c_data, 500)
				WHERE c_w_id = $4 AND c_d_id = $3 AND c_id = $2`, amount, c, in.CD, in.CW, in.D, in.W); err != nil {
				return err
			}
		} else if _, err := tx.Exec(ctx, `UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1,
			c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4`,
			amount, in.CW, in.CD, c); err != nil {
			return err
		}
		in.PaidC = c
		_, err := tx.Exec(ctx, `INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
			VALUES ($1, $2, $3, $4, $5, now(), $6, $7)`, c, in.CD, in.CW, in.D, in.W, amount, wName+"    "+dName)
		return err
	})
}

func (e *simpleExec) OrderStatus(ctx context.Context, in *oltp.OrderStatusInput) error {
	return e.inTx(ctx, func(tx pgx.Tx) error {
		c := in.C
		if c == 0 {
			var err error
			if c, err = customerByName(ctx, tx, in.W, in.D, in.CLast); err != nil {
				return err
			}
		}
		var balance float64
		var first, middle, last string
		if err := tx.QueryRow(ctx, `SELECT c_balance, c_first, c_middle, c_last FROM customer
			WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`, in.W, in.D, c).Scan(&balance, &first, &middle, &last); err != nil {
			return err
		}
		var oID int
		var entry time.Time
		var carrier *int
		if err := tx.QueryRow(ctx, `SELECT o_id, o_entry_d, o_carrier_id FROM orders
			WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1`, in.W, in.D, c).Scan(
			&oID, &entry, &carrier); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
			WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3`, in.W, in.D, oID)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		return rows.Err()
	})
}

func (e *simpleExec) Delivery(ctx context.Context, in *oltp.DeliveryInput) error {
	return e.inTx(ctx, func(tx pgx.Tx) error {
		in.Skipped = 0
		for d := 1; d <= tpcc.DistrictsPerWarehouse; d++ {
			var oID, cID int
			err := tx.QueryRow(ctx, `SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2
				ORDER BY no_o_id LIMIT 1 FOR UPDATE`, in.W, d).Scan(&oID)
			if errors.Is(err, pgx.ErrNoRows) {
				in.Skipped++
				continue // no undelivered order in this district (clause 2.7.4.2)
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3",
				in.W, d, oID); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4
				RETURNING o_c_id`, in.Carrier, in.W, d, oID).Scan(&cID); err != nil {
				return err
			}
			var amount pgtype.Numeric
			if err := tx.QueryRow(ctx, `WITH l AS (UPDATE order_line SET ol_delivery_d = now()
				WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 RETURNING ol_amount)
				SELECT sum(ol_amount) FROM l`, in.W, d, oID).Scan(&amount); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1
				WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4`, amount, in.W, d, cID); err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *simpleExec) StockLevel(ctx context.Context, in *oltp.StockLevelInput) error {
	return e.inTx(ctx, func(tx pgx.Tx) error {
		var next, low int
		if err := tx.QueryRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2",
			in.W, in.D).Scan(&next); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = $1 AND s_i_id = ol_i_id
			WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3 - 20 AND ol_o_id < $3 AND s_quantity < $4`,
			in.W, in.D, next, in.Threshold).Scan(&low)
	})
}

func bigInt(v int) *big.Int { return big.NewInt(int64(v)) }
