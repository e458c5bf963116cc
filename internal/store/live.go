package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// HeartbeatEvery is how often a running run writes its heartbeat, phase
// and new seconds to the store.
const HeartbeatEvery = time.Second

// StaleAfter is how old a running run's heartbeat may be before serve
// says it stopped without a finish (killed, or its host gone): thirty
// missed heartbeats, room for a store that was busy for a while.
const StaleAfter = 30 * time.Second

// Live follows a run while it runs (calibra serve's live page): the run
// is recorded as it starts, status running, and its heartbeat, phase and
// each second of its timed load are written once a second until End.
type Live struct {
	s  *Store
	ID string

	mu      sync.Mutex
	phase   string
	pending []liveSecond
	seq     int

	stop, done chan struct{}
}

type liveSecond struct {
	seq     int
	at      time.Time
	figures []byte
}

// Follow records the run directory dir as it starts (its results.json
// says running, with its spec and target) and keeps its heartbeat until
// End. The writes go on after ctx ends: a run interrupted still ends
// with its record.
func (s *Store) Follow(ctx context.Context, dir string) (*Live, error) {
	id, err := s.Record(ctx, dir)
	if err != nil {
		return nil, err
	}
	l := &Live{s: s, ID: id, stop: make(chan struct{}), done: make(chan struct{})}
	if err := l.flush(ctx); err != nil {
		return nil, err
	}
	go l.beat(context.WithoutCancel(ctx))
	return l, nil
}

func (l *Live) beat(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			// A write that fails is tried again at the next beat; a
			// store that stays away shows the run stopped, as it is
			// to whoever watches.
			_ = l.flush(ctx)
		}
	}
}

// Phase is what the run does now, in the words its progress printed.
func (l *Live) Phase(line string) {
	l.mu.Lock()
	l.phase = line
	l.mu.Unlock()
}

// Second is one second of the run's timed load: the columns and cells of
// its row in timeseries.csv (a cell that is a number is kept as one).
func (l *Live) Second(at time.Time, columns, cells []string) {
	figures := make(map[string]any, len(columns))
	for i, c := range columns {
		if i >= len(cells) {
			break
		}
		if v, err := strconv.ParseFloat(cells[i], 64); err == nil {
			figures[c] = v
		} else {
			figures[c] = cells[i]
		}
	}
	b, _ := json.Marshal(figures) // strings and finite numbers only
	l.mu.Lock()
	l.seq++
	l.pending = append(l.pending, liveSecond{seq: l.seq, at: at, figures: b})
	l.mu.Unlock()
}

// flush writes the heartbeat, the phase and the seconds since the last
// flush in one transaction; seconds that could not be written wait for
// the next.
func (l *Live) flush(ctx context.Context) error {
	l.mu.Lock()
	phase, pending := l.phase, slices.Clone(l.pending)
	l.mu.Unlock()
	tx, err := l.s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, l.s.d.rebind(`INSERT INTO live (run_id, heartbeat_at, phase) VALUES (?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, phase = excluded.phase`), l.ID, formatTime(time.Now()), phase); err != nil {
		return err
	}
	for _, sec := range pending {
		if _, err := tx.ExecContext(ctx, l.s.d.rebind(`INSERT INTO live_seconds (run_id, seq, at, figures) VALUES (?, ?, ?, ?)
			ON CONFLICT (run_id, seq) DO NOTHING`), l.ID, sec.seq, formatTime(sec.at), string(sec.figures)); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	l.mu.Lock()
	l.pending = l.pending[len(pending):]
	l.mu.Unlock()
	return nil
}

// End stops the heartbeat. After the run was recorded as it ended, its
// live rows go (the record is the run now); drop removes the run's record
// altogether, for a run that left no run directory.
func (l *Live) End(ctx context.Context, drop bool) error {
	close(l.stop)
	<-l.done
	if drop {
		_, err := l.s.db.ExecContext(ctx, l.s.d.rebind(`DELETE FROM runs WHERE id = ?`), l.ID)
		return err
	}
	for _, q := range []string{`DELETE FROM live_seconds WHERE run_id = ?`, `DELETE FROM live WHERE run_id = ?`} {
		if _, err := l.s.db.ExecContext(ctx, l.s.d.rebind(q), l.ID); err != nil {
			return err
		}
	}
	return nil
}

// LiveState is what the store knows of a run recorded as running: when
// it last wrote its heartbeat (zero: never) and what it was doing.
type LiveState struct {
	Heartbeat time.Time
	Phase     string
}

// Stopped says the run, recorded as running, stopped without a finish:
// its heartbeat is older than StaleAfter at now, or it never wrote one
// (a run directory of a killed run, imported).
func (l LiveState) Stopped(now time.Time) bool {
	return l.Heartbeat.IsZero() || now.Sub(l.Heartbeat) > StaleAfter
}

// LiveStates are the live states of the runs that have one, by id.
func (s *Store) LiveStates(ctx context.Context) (map[string]LiveState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT run_id, heartbeat_at, phase FROM live`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]LiveState{}
	for rows.Next() {
		var id, at string
		var st LiveState
		if err := rows.Scan(&id, &at, &st.Phase); err != nil {
			return nil, err
		}
		st.Heartbeat, _ = time.Parse(timeFormat, at)
		out[id] = st
	}
	return out, rows.Err()
}

// LiveSecond is one second of a running run's load, as Live.Second
// recorded it: Seq counts them from 1.
type LiveSecond struct {
	Seq     int            `json:"seq"`
	At      time.Time      `json:"at"`
	Figures map[string]any `json:"figures"`
}

// LiveSeconds are the run's seconds after seq after, oldest first: the
// newest limit of them.
func (s *Store) LiveSeconds(ctx context.Context, id string, after, limit int) ([]LiveSecond, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(fmt.Sprintf(`SELECT seq, at, figures FROM live_seconds WHERE run_id = ? AND seq > ?
		ORDER BY seq DESC LIMIT %d`, max(limit, 1))), id, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LiveSecond
	for rows.Next() {
		var sec LiveSecond
		var at, figures string
		if err := rows.Scan(&sec.Seq, &at, &figures); err != nil {
			return nil, err
		}
		sec.At, _ = time.Parse(timeFormat, at)
		if err := json.Unmarshal([]byte(figures), &sec.Figures); err != nil {
			return nil, fmt.Errorf("run %s's second %d: %w", id, sec.Seq, err)
		}
		out = append(out, sec)
	}
	slices.Reverse(out)
	return out, rows.Err()
}
