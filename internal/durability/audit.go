// Package durability is the power-loss audit: clients commit small
// transactions and journal each one only after its COMMIT returned; power
// is cut under that load; the machine recovers; every journaled commit
// must still be there. A commit in flight at the cut may survive (it was
// committed but never acknowledged: allowed); an acknowledged commit that
// is gone is the violation the audit exists to find.
package durability

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/results"
)

// Schema holds the audit's table in the benchmark database.
const Schema = "calibra_durability"

// Host is what the audit needs from the machine under test.
type Host interface {
	// Connect opens a connection to the benchmark database.
	Connect(ctx context.Context) (*pgx.Conn, error)
	// Cut is the power failure: the server (and, on a lab, the volatile
	// cache) killed at once.
	Cut() error
	// Recover brings the machine back: storage checked and mounted, the
	// server started and accepting connections. It returns what the file
	// system check said.
	Recover(ctx context.Context) (fsck string, err error)
	// Durable makes the starting state durable (a sync of the storage).
	Durable() error
}

// Config is one audit.
type Config struct {
	Clients int
	Load    time.Duration // of commits before each cut
	Cycles  int
	Journal string // file of acknowledged commits, "cycle client seq" a line
	Phase   func(format string, args ...any)
}

// Run runs the audit's cycles and returns what it found; it stops early
// when a recovery fails (the database is then gone and the cycle's
// acknowledged commits are counted lost).
func Run(ctx context.Context, cfg Config, host Host, out *results.Durability) error {
	out.Clients, out.LoadS, out.Journal = cfg.Clients, cfg.Load.Seconds(), cfg.Journal
	jf, err := os.Create(cfg.Journal)
	if err != nil {
		return err
	}
	defer jf.Close()
	journal := &journal{w: bufio.NewWriter(jf)}
	if err := setup(ctx, host); err != nil {
		return fmt.Errorf("create the audit's table: %w", err)
	}
	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		cfg.Phase("cycle %d of %d: %d clients commit for %s, then the power is cut", cycle, cfg.Cycles, cfg.Clients, cfg.Load)
		acked, err := load(ctx, cfg, host, cycle, journal)
		if ferr := journal.flush(); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
		c := results.DurabilityCycle{Cycle: cycle}
		for _, n := range acked {
			c.Acknowledged += n
		}
		start := time.Now()
		fsck, rerr := host.Recover(ctx)
		c.RecoveryS, c.Fsck = time.Since(start).Seconds(), fsck
		if rerr == nil {
			rerr = verify(ctx, host, cycle, acked, &c)
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.RecoveryError = rerr.Error()
			c.LostAcknowledged = c.Acknowledged
		}
		cfg.Phase("cycle %d: %d acknowledged, %d lost, %d committed unacknowledged, recovered in %.1f s%s",
			cycle, c.Acknowledged, c.LostAcknowledged, c.CommittedUnacknowledged, c.RecoveryS, errNote(c.RecoveryError))
		add(out, c)
		if rerr != nil {
			out.Note = fmt.Sprintf("cycle %d did not recover (%s); its acknowledged commits are counted lost and the audit stopped", cycle, c.RecoveryError)
			return nil
		}
	}
	return nil
}

func errNote(s string) string {
	if s == "" {
		return ""
	}
	return " (recovery failed: " + s + ")"
}

func add(out *results.Durability, c results.DurabilityCycle) {
	out.PerCycle = append(out.PerCycle, c)
	out.Cycles++
	out.Acknowledged += c.Acknowledged
	out.LostAcknowledged += c.LostAcknowledged
	out.CommittedUnacknowledged += c.CommittedUnacknowledged
	if out.RecoveryS == nil || c.RecoveryS > *out.RecoveryS {
		v := c.RecoveryS
		out.RecoveryS = &v
	}
}

func setup(ctx context.Context, host Host) error {
	conn, err := host.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		"CREATE SCHEMA IF NOT EXISTS " + Schema,
		"DROP TABLE IF EXISTS " + Schema + ".acks",
		"CREATE TABLE " + Schema + ".acks (cycle int, client int, seq bigint, pad text, PRIMARY KEY (cycle, client, seq))",
		"CHECKPOINT",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	return host.Durable()
}

// journal is the acknowledged commits, written as they are acknowledged.
type journal struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (j *journal) ack(cycle, client int, seq int64) {
	j.mu.Lock()
	fmt.Fprintf(j.w, "%d %d %d\n", cycle, client, seq)
	j.mu.Unlock()
}

func (j *journal) flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.w.Flush()
}

// pad makes each row a realistic size (a WAL record of a few hundred bytes).
var pad = strings.Repeat("x", 200)

// load runs the clients for cfg.Load, cuts the power under them, and
// returns the last acknowledged sequence number of each client (each
// client commits seq 1, 2, ... one at a time, so every seq up to it was
// acknowledged).
func load(ctx context.Context, cfg Config, host Host, cycle int, j *journal) ([]int64, error) {
	conns := make([]*pgx.Conn, cfg.Clients)
	for i := range conns {
		c, err := host.Connect(ctx)
		if err != nil {
			for _, o := range conns[:i] {
				o.Close(context.Background())
			}
			return nil, err
		}
		conns[i] = c
	}
	acked := make([]int64, cfg.Clients)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := int64(1); lctx.Err() == nil; seq++ {
				// Autocommit: Exec returns when the COMMIT did.
				if _, err := conn.Exec(lctx, "INSERT INTO "+Schema+".acks VALUES ($1, $2, $3, $4)", cycle, i, seq, pad); err != nil {
					return
				}
				j.ack(cycle, i, seq)
				acked[i] = seq
			}
		}()
	}
	var cutErr error
	select {
	case <-time.After(cfg.Load):
		cutErr = host.Cut() // the clients are mid-commit
	case <-ctx.Done():
	}
	// After the cut every connection fails; the cancel ends the rest.
	stop()
	wg.Wait()
	for _, c := range conns {
		c.Close(context.Background())
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return acked, cutErr
}

// verify counts the cycle's acknowledged commits that are gone, and those
// in flight at the cut that survived.
func verify(ctx context.Context, host Host, cycle int, acked []int64, c *results.DurabilityCycle) error {
	conn, err := host.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for client, last := range acked {
		var present, extra int64
		err := conn.QueryRow(ctx, "SELECT count(*) FILTER (WHERE seq <= $3), count(*) FILTER (WHERE seq > $3) FROM "+Schema+".acks WHERE cycle = $1 AND client = $2",
			cycle, client, last).Scan(&present, &extra)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" {
			// The table itself is gone: everything acknowledged is lost.
			c.LostAcknowledged = c.Acknowledged
			return nil
		}
		if err != nil {
			return err
		}
		c.LostAcknowledged += last - present
		c.CommittedUnacknowledged += extra
	}
	return nil
}
