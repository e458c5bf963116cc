package oltp

import (
	"context"

	"github.com/calibra-bench/calibra/internal/engine"
)

// Connect opens a control session on e's schema.
func Connect(ctx context.Context, e engine.Engine) (Control, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	return d.Connect(ctx)
}

// NewSession opens one session on e's schema running the transactions as
// mode says; the power-loss audit runs New-Order and Payment on it in
// AuditMode.
func NewSession(ctx context.Context, e engine.Engine, mode Mode) (Session, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	return d.Session(ctx, mode)
}

// AuditMode is the mode the power-loss audit runs in: every dialect has
// it, and in it every dialect sets the order's id (in.OID) and the
// customer paid (in.PaidC), which the audit journals once COMMIT returned.
const AuditMode = ModeClientSimple
