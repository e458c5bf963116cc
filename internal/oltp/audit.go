package oltp

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
)

// Committer runs New-Order and Payment client-side on one connection, for
// the power-loss audit: each returns once COMMIT did, with the order's id
// (in.OID) or the customer paid (in.PaidC) to journal.
type Committer struct{ e clientExec }

// NewCommitter wraps conn, whose search_path holds the schema.
func NewCommitter(conn *pgx.Conn) *Committer { return &Committer{clientExec{conn: conn}} }

// NewOrder runs one New-Order; an input drawn to roll back returns
// ErrRolledBack.
func (c *Committer) NewOrder(ctx context.Context, in *NewOrderInput) error {
	err := c.e.newOrder(ctx, in)
	if errors.Is(err, errRollback) {
		return ErrRolledBack
	}
	return err
}

// Payment runs one Payment.
func (c *Committer) Payment(ctx context.Context, in *PaymentInput) error { return c.e.payment(ctx, in) }

// ErrRolledBack is a New-Order that rolled back as the specification asks
// (an unused item): nothing was committed.
var ErrRolledBack = errors.New("rolled back by design")

// Connect opens a connection to the target with search_path on the schema.
func Connect(ctx context.Context, t *postgres.Target) (*pgx.Conn, error) { return connect(ctx, t) }
