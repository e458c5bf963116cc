package oltpmy

// tables are the workload's tables, dropped and created anew by a build.
var tables = []string{"warehouse", "district", "customer", "history", "orders", "new_order", "order_line", "item", "stock", "build_info"}

// tableDDL creates the tables with their primary keys: InnoDB stores a
// table in its primary key's order, so a key added after the load would
// rebuild every table, while the generator's rows arrive in key order and
// append. The secondary indexes come after the load (indexDDL), built by
// sorting. The types are oltppg's in MariaDB's words.
var tableDDL = []string{
	`CREATE TABLE warehouse (w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
		w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,4), w_ytd decimal(12,2),
		PRIMARY KEY (w_id)) ENGINE=InnoDB`,
	`CREATE TABLE district (d_id smallint NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20),
		d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,4),
		d_ytd decimal(12,2), d_next_o_id int, PRIMARY KEY (d_w_id, d_id)) ENGINE=InnoDB`,
	`CREATE TABLE customer (c_id int NOT NULL, c_d_id smallint NOT NULL, c_w_id int NOT NULL, c_first varchar(16),
		c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20),
		c_state char(2), c_zip char(9), c_phone char(16), c_since datetime, c_credit char(2),
		c_credit_lim decimal(12,2), c_discount decimal(4,4), c_balance decimal(12,2), c_ytd_payment decimal(12,2),
		c_payment_cnt int, c_delivery_cnt int, c_data varchar(500), PRIMARY KEY (c_w_id, c_d_id, c_id)) ENGINE=InnoDB`,
	// history has no key in the specification; InnoDB gives it a hidden one.
	`CREATE TABLE history (h_c_id int, h_c_d_id smallint, h_c_w_id int, h_d_id smallint, h_w_id int,
		h_date datetime, h_amount decimal(6,2), h_data varchar(24)) ENGINE=InnoDB`,
	`CREATE TABLE orders (o_id int NOT NULL, o_d_id smallint NOT NULL, o_w_id int NOT NULL, o_c_id int,
		o_entry_d datetime, o_carrier_id smallint, o_ol_cnt smallint, o_all_local smallint,
		PRIMARY KEY (o_w_id, o_d_id, o_id)) ENGINE=InnoDB`,
	`CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id smallint NOT NULL, no_w_id int NOT NULL,
		PRIMARY KEY (no_w_id, no_d_id, no_o_id)) ENGINE=InnoDB`,
	`CREATE TABLE order_line (ol_o_id int NOT NULL, ol_d_id smallint NOT NULL, ol_w_id int NOT NULL,
		ol_number smallint NOT NULL, ol_i_id int, ol_supply_w_id int, ol_delivery_d datetime,
		ol_quantity smallint, ol_amount decimal(6,2), ol_dist_info char(24),
		PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE=InnoDB`,
	`CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50),
		PRIMARY KEY (i_id)) ENGINE=InnoDB`,
	`CREATE TABLE stock (s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity smallint, s_dist_01 char(24),
		s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24),
		s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int,
		s_order_cnt int, s_remote_cnt int, s_data varchar(50), PRIMARY KEY (s_w_id, s_i_id)) ENGINE=InnoDB`,
	`CREATE TABLE build_info (name varchar(64) NOT NULL PRIMARY KEY, value text NOT NULL) ENGINE=InnoDB`,
}

// indexDDL is run after the load, one statement per connection in parallel.
var indexDDL = []string{
	`CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)`,
	`CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)`,
}

// expectedRollback is the SQLSTATE the New-Order procedure signals for the
// specification's 1% of orders with an unused item number (clause 2.4.2.3).
const expectedRollback = "CA001"

// procedures are the procedures mode: each transaction is one CALL of a
// stored procedure, as HammerDB's MariaDB driver does, so the client waits
// for one round trip per transaction. Each procedure is its own
// transaction, rolled back on any error (which it passes on). Inputs are
// drawn by the client, as the spec's terminal does; New-Order's lines
// come as JSON arrays, MariaDB having no array parameters.
var procedures = []string{
	`CREATE PROCEDURE tpcc_new_order(p_w_id int, p_d_id int, p_c_id int, p_all_local int,
		p_i_ids text, p_supply_w_ids text, p_quantities text)
	BEGIN
		DECLARE v_w_tax, v_d_tax, v_c_discount decimal(4,4);
		DECLARE v_o_id, v_i, v_item, v_supply, v_qty, v_s_quantity int;
		DECLARE v_cnt int DEFAULT JSON_LENGTH(p_i_ids);
		DECLARE v_c_last varchar(16);
		DECLARE v_c_credit char(2);
		DECLARE v_i_price, v_amount decimal(6,2);
		DECLARE v_total decimal(12,2) DEFAULT 0;
		DECLARE v_i_name varchar(24);
		DECLARE v_i_data, v_s_data varchar(50);
		DECLARE v_s_dist char(24);
		DECLARE v_brand char(1);
		DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
		START TRANSACTION;
		SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
		UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
		SELECT d_tax, d_next_o_id - 1 INTO v_d_tax, v_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
		SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit
			FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
		INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
			VALUES (v_o_id, p_d_id, p_w_id, p_c_id, NOW(), NULL, v_cnt, p_all_local);
		INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
		SET v_i = 0;
		WHILE v_i < v_cnt DO
			SET v_item = JSON_VALUE(p_i_ids, CONCAT('$[', v_i, ']'));
			SET v_supply = JSON_VALUE(p_supply_w_ids, CONCAT('$[', v_i, ']'));
			SET v_qty = JSON_VALUE(p_quantities, CONCAT('$[', v_i, ']'));
			SET v_i_price = NULL;
			SELECT i_price, i_name, i_data INTO v_i_price, v_i_name, v_i_data FROM item WHERE i_id = v_item;
			IF v_i_price IS NULL THEN
				SIGNAL SQLSTATE 'CA001' SET MESSAGE_TEXT = 'item number is not valid';
			END IF;
			SELECT s_quantity, s_data, ELT(p_d_id, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05,
					s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10)
				INTO v_s_quantity, v_s_data, v_s_dist
				FROM stock WHERE s_w_id = v_supply AND s_i_id = v_item FOR UPDATE;
			UPDATE stock SET
				s_quantity = IF(v_s_quantity >= v_qty + 10, v_s_quantity - v_qty, v_s_quantity - v_qty + 91),
				s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
				s_remote_cnt = s_remote_cnt + IF(v_supply <> p_w_id, 1, 0)
				WHERE s_w_id = v_supply AND s_i_id = v_item;
			SET v_brand = IF(v_i_data LIKE '%ORIGINAL%' AND v_s_data LIKE '%ORIGINAL%', 'B', 'G');
			SET v_amount = v_qty * v_i_price;
			INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
				ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
				VALUES (v_o_id, p_d_id, p_w_id, v_i + 1, v_item, v_supply, NULL, v_qty, v_amount, v_s_dist);
			SET v_total = v_total + v_amount;
			SET v_i = v_i + 1;
		END WHILE;
		COMMIT;
	END`,

	// Clause 2.5.2.2: the customer at position ceil(n/2) of those sorted by first name.
	`CREATE PROCEDURE tpcc_customer_by_name(p_w_id int, p_d_id int, p_c_last varchar(16), OUT p_c_id int)
	BEGIN
		DECLARE v_n, v_off int;
		SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
		SET v_off = GREATEST((v_n + 1) DIV 2 - 1, 0);
		SELECT c_id INTO p_c_id FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
			ORDER BY c_first LIMIT v_off, 1;
	END`,

	`CREATE PROCEDURE tpcc_payment(p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int,
		p_c_last varchar(16), p_amount decimal(6,2))
	BEGIN
		DECLARE v_c_id int DEFAULT p_c_id;
		DECLARE v_w_name, v_d_name varchar(10);
		DECLARE v_w_street_1, v_w_street_2, v_w_city, v_d_street_1, v_d_street_2, v_d_city varchar(20);
		DECLARE v_w_state, v_d_state char(2);
		DECLARE v_w_zip, v_d_zip char(9);
		DECLARE v_c_first, v_c_last varchar(16);
		DECLARE v_c_middle, v_c_credit char(2);
		DECLARE v_c_street_1, v_c_street_2, v_c_city varchar(20);
		DECLARE v_c_state char(2);
		DECLARE v_c_zip char(9);
		DECLARE v_c_phone char(16);
		DECLARE v_c_credit_lim, v_c_balance decimal(12,2);
		DECLARE v_c_discount decimal(4,4);
		DECLARE v_c_since datetime;
		DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
		START TRANSACTION;
		UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
		SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
			INTO v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip FROM warehouse WHERE w_id = p_w_id;
		UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
		SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
			INTO v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip
			FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
		IF v_c_id = 0 THEN
			CALL tpcc_customer_by_name(p_c_w_id, p_c_d_id, p_c_last, v_c_id);
		END IF;
		SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
			c_credit, c_credit_lim, c_discount, c_balance, c_since
			INTO v_c_first, v_c_middle, v_c_last, v_c_street_1, v_c_street_2, v_c_city, v_c_state, v_c_zip, v_c_phone,
			v_c_credit, v_c_credit_lim, v_c_discount, v_c_balance, v_c_since
			FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
		IF v_c_credit = 'BC' THEN
			UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
				c_payment_cnt = c_payment_cnt + 1,
				c_data = LEFT(CONCAT_WS(' ', v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_amount, '|', c_data), 500)
			WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
		ELSE
			UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
				c_payment_cnt = c_payment_cnt + 1
			WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
		END IF;
		INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
			VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, NOW(), p_amount, CONCAT(v_w_name, '    ', v_d_name));
		COMMIT;
	END`,

	`CREATE PROCEDURE tpcc_order_status(p_w_id int, p_d_id int, p_c_id int, p_c_last varchar(16))
	BEGIN
		DECLARE v_c_id int DEFAULT p_c_id;
		DECLARE v_c_balance decimal(12,2);
		DECLARE v_c_first, v_c_last varchar(16);
		DECLARE v_c_middle char(2);
		DECLARE v_o_id, v_o_carrier_id, v_lines, v_ol_i_id, v_ol_supply_w_id, v_ol_quantity int DEFAULT 0;
		DECLARE v_o_entry_d, v_ol_delivery_d datetime;
		DECLARE v_ol_amount decimal(6,2);
		DECLARE v_done int DEFAULT 0;
		DECLARE order_lines CURSOR FOR SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
			WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
		DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
		DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
		START TRANSACTION;
		IF v_c_id = 0 THEN
			CALL tpcc_customer_by_name(p_w_id, p_d_id, p_c_last, v_c_id);
		END IF;
		SELECT c_balance, c_first, c_middle, c_last INTO v_c_balance, v_c_first, v_c_middle, v_c_last
			FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
		SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_o_entry_d, v_o_carrier_id FROM orders
			WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
		SET v_done = 0;
		OPEN order_lines;
		fetching: LOOP
			FETCH order_lines INTO v_ol_i_id, v_ol_supply_w_id, v_ol_quantity, v_ol_amount, v_ol_delivery_d;
			IF v_done THEN LEAVE fetching; END IF;
			SET v_lines = v_lines + 1;
		END LOOP;
		CLOSE order_lines;
		COMMIT;
	END`,

	// Delivery answers with the districts it delivered an order in.
	`CREATE PROCEDURE tpcc_delivery(p_w_id int, p_carrier_id int)
	BEGIN
		DECLARE v_d, v_o_id, v_c_id int;
		DECLARE v_delivered int DEFAULT 0;
		DECLARE v_amount decimal(12,2);
		DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
		START TRANSACTION;
		SET v_d = 1;
		WHILE v_d <= 10 DO
			-- A district with no undelivered order is skipped (clause 2.7.4.2).
			SET v_o_id = NULL;
			SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d
				ORDER BY no_o_id LIMIT 1 FOR UPDATE;
			IF v_o_id IS NOT NULL THEN
				DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o_id;
				SELECT o_c_id INTO v_c_id FROM orders WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id FOR UPDATE;
				UPDATE orders SET o_carrier_id = p_carrier_id WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
				SELECT SUM(ol_amount) INTO v_amount FROM order_line
					WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
				UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
				UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
					WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c_id;
				SET v_delivered = v_delivered + 1;
			END IF;
			SET v_d = v_d + 1;
		END WHILE;
		COMMIT;
		SELECT v_delivered;
	END`,

	`CREATE PROCEDURE tpcc_stock_level(p_w_id int, p_d_id int, p_threshold int)
	BEGIN
		DECLARE v_next, v_low int;
		DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
		START TRANSACTION;
		SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
		SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
			WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
			AND s_quantity < p_threshold;
		COMMIT;
	END`,
}

// procedureNames are the procedures a build drops before making them anew.
var procedureNames = []string{"tpcc_new_order", "tpcc_customer_by_name", "tpcc_payment", "tpcc_order_status",
	"tpcc_delivery", "tpcc_stock_level"}
