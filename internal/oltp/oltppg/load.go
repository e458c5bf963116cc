package oltppg

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
func (l *loader) Load(ctx context.Context, batches []oltp.Batch, fill func([]byte, oltp.Batch) []byte) error {
	ctx, l.cancel = context.WithCancel(ctx)
	l.s = newSched(plan(batches))
	for _, conn := range l.conns {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for t := l.s.next(); t != nil; t = l.s.next() {
				var err error
				switch t.kind {
				case taskLoad:
					err = loadTable(ctx, conn, t, l.Format(t.table), fill)
				case taskIndex:
					err = execEach(ctx, conn, append([]string{l.indexWorkers()}, t.sql...))
				default:
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

// binaryTables are the tables COPY takes in binary: those whose
// timestamps and numerics the server parses more slowly as text. Measured
// here, server CPU for 3 warehouses' order_line went from 0.85 s as text to
// 0.58-0.77 s in binary, customer's from 0.23-0.25 s to 0.17-0.19 s;
// stock's, all text but its ids, from 0.61-0.65 s to 0.65-0.82 s (binary is
// longer, and char columns cost the same), so stock stays text, and item,
// warehouse and district, a few megabytes, too.
var binaryTables = map[tpcc.Table]bool{tpcc.OrderLine: true, tpcc.Orders: true, tpcc.History: true,
	tpcc.NewOrder: true, tpcc.Customer: true}

// Format is binary for binaryTables, else text.
func (l *loader) Format(t tpcc.Table) tpcc.Format {
	if binaryTables[t] {
		return tpcc.Binary
	}
	return tpcc.Text
}

// loadTable stores a table's batches in one transaction that truncates it
// first, so that COPY may freeze the rows, and in one COPY: PostgreSQL 16
// and later extend a table by many pages at once for a COPY and leave
// those it did not fill empty when the COPY ends, so a COPY a batch left
// 6-36% of each table's pages empty (PostgreSQL 18, 5 warehouses). The
// next batch is made while the server stores the last one (see ahead).
func loadTable(ctx context.Context, conn *pgx.Conn, t *task, format tpcc.Format, fill func([]byte, oltp.Batch) []byte) error {
	name := t.table.String()
	sql := "COPY " + name + " (" + strings.Join(t.table.Columns(), ", ") + ") FROM STDIN WITH (FREEZE, FORMAT " + format.String() + ")"
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit a no-op
	if _, err := tx.Exec(ctx, "TRUNCATE "+name); err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	batches, free := ahead(ctx, t.batches, fill)
	rows := &stream{ctx: ctx, batches: batches, free: free}
	if _, err := conn.PgConn().CopyFrom(ctx, io.MultiReader(bytes.NewReader(format.Header()), rows, bytes.NewReader(format.Trailer())), sql); err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	return nil
}

// stream reads the batches ahead makes as one run of rows, returning each
// buffer once read; it fails, so that the COPY fails, if the batches stop
// early because ctx ended.
type stream struct {
	ctx     context.Context
	batches <-chan *buffer
	free    chan<- *buffer
	cur     *buffer
	off     int
}

func (s *stream) Read(p []byte) (int, error) {
	for s.cur == nil || s.off == len(s.cur.data) {
		if s.cur != nil {
			s.free <- s.cur
		}
		var ok bool
		if s.cur, ok = <-s.batches; !ok {
			s.cur = nil
			if err := s.ctx.Err(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		s.off = 0
	}
	n := copy(p, s.cur.data[s.off:])
	s.off += n
	return n, nil
}

// buffer is one batch, made and then sent.
type buffer struct{ data []byte }

// ahead makes batches in order on a goroutine of its own, one batch
// ahead of the sender, so the client's generation overlaps the server's
// COPY instead of alternating with it on the connection. The sender
// returns each buffer on free once sent; the channel of batches closes
// after the last batch or at ctx's end.
func ahead(ctx context.Context, batches []oltp.Batch, fill func([]byte, oltp.Batch) []byte) (<-chan *buffer, chan<- *buffer) {
	out := make(chan *buffer, 1)
	free := make(chan *buffer, 2)
	free <- &buffer{}
	free <- &buffer{}
	go func() {
		defer close(out)
		for _, b := range batches {
			var buf *buffer
			select {
			case buf = <-free:
			case <-ctx.Done():
				return
			}
			buf.data = fill(buf.data[:0], b)
			select {
			case out <- buf:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, free
}

// indexWorkers sets an index build's parallel workers: none while other
// tables still load, since the loads keep the cores busy and the workers'
// shared sort only adds CPU (20 warehouses on 2 cores, alternated twice:
// 6.9-7.1 s of server CPU a GB and 8.7-8.9 s against 7.5 s/GB and 9.6-9.8 s
// with PostgreSQL's default of 2), the server's setting once every load is
// done.
func (l *loader) indexWorkers() string {
	select {
	case <-l.s.loaded:
		return "RESET max_parallel_maintenance_workers"
	default:
		return "SET max_parallel_maintenance_workers = 0"
	}
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
