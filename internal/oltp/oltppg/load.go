package oltppg

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

func (d dialect) Loader(ctx context.Context, n int) (oltp.Loader, error) {
	conns, err := postgres.OpenConns(ctx, n, d.connect)
	if err != nil {
		postgres.CloseConns(conns)
		return nil, err
	}
	return &loader{conns: conns}, nil
}

// loader loads each table in one transaction on one connection: TRUNCATE,
// then a COPY ... FREEZE per batch. A table truncated in the loading
// transaction takes its rows frozen and marked all-visible (PostgreSQL 14
// and later), so the VACUUM (FREEZE) that follows reads the visibility
// map and rewrites no page, and no later reader sets hint bits. The
// tables load side by side over the connections, biggest first; as soon as
// a table's rows are in, its indexes build on the next free connection
// while other tables still load, then its primary key and vacuum follow.
type loader struct {
	conns  []*pgx.Conn
	s      *sched
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Load starts the loads and their follow-ups on the connections and
// returns once every table's rows are in (or one failed); Finish waits for
// the indexes and vacuums.
func (l *loader) Load(ctx context.Context, batches []oltp.Batch, fill func([]byte, oltp.Batch) []byte, done func(oltp.Batch)) error {
	ctx, l.cancel = context.WithCancel(ctx)
	l.s = newSched(plan(batches))
	for _, conn := range l.conns {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for t := l.s.next(); t != nil; t = l.s.next() {
				var err error
				if t.kind == taskLoad {
					err = loadTable(ctx, conn, t, fill, done)
				} else {
					err = execEach(ctx, conn, t.sql)
				}
				if err != nil {
					l.cancel()
				}
				l.s.finish(t, err)
			}
		}()
	}
	return l.s.wait(ctx, l.s.loaded)
}

// loadTable stores a table's batches in one transaction that truncates it
// first, so that COPY may freeze the rows: in COPY's binary format for the
// tables of binaryTables, else as the generator's text. The next batch is
// made while the server stores the last one (see ahead).
func loadTable(ctx context.Context, conn *pgx.Conn, t *task, fill func([]byte, oltp.Batch) []byte, done func(oltp.Batch)) error {
	name := t.table.String()
	types, inBinary := binaryTables[t.table]
	sql := "COPY " + name + " (" + strings.Join(t.table.Columns(), ", ") + ") FROM STDIN WITH (FREEZE"
	if inBinary {
		sql += ", FORMAT binary"
	}
	sql += ")"
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit a no-op
	if _, err := tx.Exec(ctx, "TRUNCATE "+name); err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	encode := func(buf *buffers, b oltp.Batch) (err error) {
		buf.text = fill(buf.text[:0], b)
		buf.data = buf.text
		if inBinary {
			buf.bin, err = toBinary(buf.bin[:0], buf.text, types)
			buf.data = buf.bin
		}
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	batches, free := ahead(ctx, t.batches, encode)
	for buf := range batches {
		if buf.err != nil {
			return fmt.Errorf("load %s batch %d: %w", buf.b.Table, buf.b.N, buf.err)
		}
		if _, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(buf.data), sql); err != nil {
			return fmt.Errorf("load %s batch %d: %w", buf.b.Table, buf.b.N, err)
		}
		done(buf.b)
		free <- buf
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	return nil
}

// buffers are one batch's text, its binary form and which of the two
// COPY sends, reused from batch to batch.
type buffers struct {
	text, bin, data []byte
	b               oltp.Batch
	err             error
}

// ahead encodes batches in order on a goroutine of its own, one batch
// ahead of the sender, so the client's generation overlaps the server's
// COPY instead of alternating with it on the connection. The sender
// returns each buffer on free once sent; the channel of batches closes
// after the last batch, the first encoding error, or ctx's end.
func ahead(ctx context.Context, batches []oltp.Batch, encode func(*buffers, oltp.Batch) error) (<-chan *buffers, chan<- *buffers) {
	out := make(chan *buffers, 1)
	free := make(chan *buffers, 2)
	free <- &buffers{}
	free <- &buffers{}
	go func() {
		defer close(out)
		for _, b := range batches {
			var buf *buffers
			select {
			case buf = <-free:
			case <-ctx.Done():
				return
			}
			buf.b, buf.err = b, encode(buf, b)
			select {
			case out <- buf:
			case <-ctx.Done():
				return
			}
			if buf.err != nil {
				return
			}
		}
	}()
	return out, free
}

// execEach runs a task's statements in order, each on its own (VACUUM runs
// in no transaction block).
func execEach(ctx context.Context, conn *pgx.Conn, stmts []string) error {
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// Finish waits for the keys, indexes and vacuums the loads started, then
// sizes the schema. IndexS and VacuumS are the parts of the build after
// the last row was stored: what the indexes and the vacuums added to the
// load, not all their work (most of it overlapped the loads).
func (l *loader) Finish(ctx context.Context, phase func(string)) (oltp.LoadTail, error) {
	var tail oltp.LoadTail
	phase("adding keys and indexes (each table's began once its rows were in)")
	t0 := time.Now()
	if err := l.s.wait(ctx, l.s.indexed); err != nil {
		return tail, err
	}
	tail.IndexS = time.Since(t0).Seconds()
	phase("vacuum and analyze")
	t0 = time.Now()
	if err := l.s.wait(ctx, l.s.sealed); err != nil {
		return tail, err
	}
	l.wg.Wait()
	tail.VacuumS = time.Since(t0).Seconds()
	err := l.conns[0].QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, oltp.Schema).Scan(&tail.Bytes)
	return tail, err
}

// Close stops any task still running and closes the connections.
func (l *loader) Close() {
	if l.cancel != nil {
		l.cancel()
		l.s.halt()
	}
	l.wg.Wait()
	postgres.CloseConns(l.conns)
}

// plan makes a load task of each table's batches, in the order of the
// tables' first batches (the build sends the biggest batches first), each
// with its index builds and its seal to follow.
func plan(batches []oltp.Batch) []*task {
	var loads []*task
	byTable := map[tpcc.Table]*task{}
	for _, b := range batches {
		t := byTable[b.Table]
		if t == nil {
			t = &task{kind: taskLoad, table: b.Table}
			byTable[b.Table] = t
			loads = append(loads, t)
		}
		t.batches = append(t.batches, b)
	}
	for _, t := range loads {
		seal := &task{kind: taskSeal, table: t.table, sql: sealDDL(t.table)}
		for _, s := range indexDDL(t.table) {
			t.then = append(t.then, &task{kind: taskIndex, table: t.table, sql: []string{s}, then: []*task{seal}, after: 1})
			seal.after++
		}
		if len(t.then) == 0 {
			t.then = []*task{seal}
			seal.after = 1
		}
	}
	return loads
}
