package engine

import "context"

// Attacher connects to a managed instance that another calibra command
// runs (an oltp run's, while calibra profile watches it), starting and
// changing nothing: Describe is complete after it.
type Attacher interface {
	Attach(ctx context.Context) error
}
