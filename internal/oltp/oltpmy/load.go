package oltpmy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

func (d dialect) Loader(ctx context.Context, n int) (oltp.Loader, error) {
	conns, err := engine.OpenConns(ctx, n, d.connect)
	if err != nil {
		for _, c := range conns {
			c.close()
		}
		return nil, err
	}
	return &loader{conns: conns}, nil
}

// loader stores each batch with one LOAD DATA LOCAL INFILE, the batch's
// text streamed from memory: the generator's text is LOAD DATA's default
// format (tab-separated, \N for NULL, a line a row). A server that refuses
// local files (local_infile off) gets multi-row INSERTs instead, which
// loaded half as fast here: two warehouses, two sessions, 122-181k rows/s
// by LOAD DATA against 61-82k by INSERT.
type loader struct {
	conns  []conn
	insert atomic.Bool // the server refused LOAD DATA LOCAL
}

// loads numbers the reader names of concurrent loads in one process.
var loads atomic.Int64

// Format is LOAD DATA's: text for every table.
func (l *loader) Format(tpcc.Table) tpcc.Format { return tpcc.Text }

func (l *loader) Load(ctx context.Context, batches []oltp.Batch, fill func([]byte, oltp.Batch) []byte) error {
	bufs := make([][]byte, len(l.conns))
	names := make([]string, len(l.conns))
	seq := loads.Add(1)
	for w := range l.conns {
		names[w] = fmt.Sprintf("calibra-oltp-%d-%d", seq, w)
		mysql.RegisterReaderHandler(names[w], func() io.Reader { return bytes.NewReader(bufs[w]) })
	}
	defer func() {
		for _, n := range names {
			mysql.DeregisterReaderHandler(n)
		}
	}()
	stmts := make([][]byte, len(l.conns)) // the INSERT fallback's statement, per session
	return engine.OnConns(ctx, l.conns, batches, func(ctx context.Context, w int, c conn, b oltp.Batch) error {
		bufs[w] = fill(bufs[w][:0], b)
		cols := strings.Join(b.Table.Columns(), ", ")
		if !l.insert.Load() {
			_, err := c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+names[w]+"' INTO TABLE "+b.Table.String()+" ("+cols+")")
			if !localRefused(err) {
				if err != nil {
					return fmt.Errorf("load %s batch %d: %w", b.Table, b.N, err)
				}
				return nil
			}
			l.insert.Store(true)
		}
		if err := insertRows(ctx, c, b.Table.String(), cols, bufs[w], &stmts[w]); err != nil {
			return fmt.Errorf("insert %s batch %d: %w", b.Table, b.N, err)
		}
		return nil
	})
}

// localRefused says the server will not read a client's file: local_infile
// off (MariaDB 1148 or 4166, MySQL 3948).
func localRefused(err error) bool {
	e, ok := mysqlErr(err)
	return ok && (e.Number == 1148 || e.Number == 4166 || e.Number == 3948)
}

// insertChunk bounds one INSERT statement, well under any server's
// max_allowed_packet (4 MiB on older MySQL).
const insertChunk = 1 << 20

// insertRows stores the batch's text as multi-row INSERTs of about
// insertChunk bytes each, every value a quoted string the server converts
// to its column's type, \N a NULL.
func insertRows(ctx context.Context, c conn, table, cols string, text []byte, stmt *[]byte) error {
	head := "INSERT INTO " + table + " (" + cols + ") VALUES "
	s := append((*stmt)[:0], head...)
	flush := func() error {
		if len(s) == len(head) {
			return nil
		}
		_, err := c.ExecContext(ctx, string(s))
		s = append(s[:0], head...)
		return err
	}
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte{'\n'})
		if len(s) > len(head) {
			s = append(s, ',')
		}
		s = append(s, '(')
		for i, f := range bytes.Split(line, []byte{'\t'}) {
			if i > 0 {
				s = append(s, ',')
			}
			if string(f) == `\N` {
				s = append(s, "NULL"...)
				continue
			}
			s = append(s, '\'')
			s = append(s, bytes.ReplaceAll(f, []byte{'\''}, []byte("''"))...)
			s = append(s, '\'')
		}
		s = append(s, ')')
		if len(s) >= insertChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	err := flush()
	*stmt = s
	return err
}

// Finish adds the secondary indexes and makes the optimizer's statistics
// (ANALYZE TABLE: VacuumS), each spread over the sessions, then sizes the
// tables with their indexes.
func (l *loader) Finish(ctx context.Context, phase func(string)) (oltp.LoadTail, error) {
	var tail oltp.LoadTail
	exec := func(stmts []string) error {
		return engine.OnConns(ctx, l.conns, stmts, func(ctx context.Context, _ int, c conn, q string) error {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			return nil
		})
	}
	phase("adding indexes")
	t0 := time.Now()
	if err := exec(indexDDL); err != nil {
		return tail, err
	}
	tail.IndexS = time.Since(t0).Seconds()
	phase("analyze")
	t0 = time.Now()
	var analyze []string
	for _, tb := range tables {
		analyze = append(analyze, "ANALYZE TABLE "+tb)
	}
	if err := exec(analyze); err != nil {
		return tail, err
	}
	tail.VacuumS = time.Since(t0).Seconds()
	err := l.conns[0].QueryRowContext(ctx, `SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('`+strings.Join(tables, "', '")+`')`).Scan(&tail.Bytes)
	return tail, err
}

func (l *loader) Close() {
	for _, c := range l.conns {
		c.close()
	}
}
