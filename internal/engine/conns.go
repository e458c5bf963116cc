package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
)

// OpenConns opens n sessions with open, returning those it opened also
// when one fails, so the caller can close them.
func OpenConns[C any](ctx context.Context, n int, open func(context.Context) (C, error)) ([]C, error) {
	conns := make([]C, 0, n)
	for range n {
		c, err := open(ctx)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// OnConns runs the jobs in order, each on the first free session (w is
// its index, for per-session state such as a reused buffer). The first
// error stops the others and is returned.
func OnConns[C, J any](ctx context.Context, conns []C, jobs []J, do func(ctx context.Context, w int, conn C, j J) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan J, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	errs := make(chan error, len(conns))
	var wg sync.WaitGroup
	for w, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				if ctx.Err() != nil {
					return
				}
				if err := do(ctx, w, conn, j); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// Unreachable says in a few words why no server answered a connection,
// and what to check: a host not known, nothing listening, no socket in
// socketDir (the Unix socket's directory a DSN names; "" when none), no
// answer in time; else the innermost cause's first line, with password
// hidden. Drivers that try each address (and TLS, then not) join errors
// that repeat each other: the cause is named once.
func Unreachable(err error, password, socketDir string) (why, fix string) {
	fix = "check the host and port in --dsn and that the server is running"
	var dns *net.DNSError
	var nerr net.Error
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("the host name %s is not known", dns.Name), "check the host name in --dsn"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing listens there (connection refused)", fix
	case errors.Is(err, syscall.ENOENT) && socketDir != "":
		return "no server socket is in " + socketDir, "check the socket directory (host) and port in --dsn and that the server is running"
	case errors.As(err, &nerr) && nerr.Timeout():
		return "no answer in time", "check the host, the port and any firewall in between"
	}
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
		err = next
	}
	cause := err.Error()
	if password != "" {
		cause = strings.ReplaceAll(cause, password, "xxxxx")
	}
	first, _, _ := strings.Cut(cause, "\n")
	return first, fix
}
