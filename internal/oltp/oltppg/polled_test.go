//go:build integration

package oltppg

import (
	"context"
	"syscall"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// polledSession runs a RawSession's transactions through its requests and
// answers on its socket, a round trip at a time as the polling driver
// does, so a test holds them to the Session's methods.
type polledSession struct {
	oltp.RawSession
	fd  int
	ans []byte
}

func newPolledSession(t *testing.T, sess oltp.Session) *polledSession {
	t.Helper()
	rs, ok := sess.(oltp.RawSession)
	if !ok {
		t.Fatalf("%T is not a RawSession", sess)
	}
	fd, err := rs.FD()
	if err == nil {
		err = syscall.SetNonblock(fd, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &polledSession{RawSession: rs, fd: fd, ans: make([]byte, 8192)}
}

func (s *polledSession) run(t oltp.TxType, in any) error {
	req, n := s.AppendCall(nil, t, in), 0
	for {
		if _, err := syscall.Write(s.fd, req); err != nil {
			return err
		}
		for {
			used, next, err := s.Answer(s.ans[:n], t, in, nil)
			if used > 0 {
				n = copy(s.ans, s.ans[used:n])
				if len(next) == 0 {
					return err
				}
				req = next
				break
			}
			if n == len(s.ans) {
				s.ans = append(s.ans, make([]byte, n)...)
			}
			m, err := syscall.Read(s.fd, s.ans[n:])
			if err != nil {
				return err
			}
			n += m
		}
	}
}

func (s *polledSession) NewOrder(_ context.Context, in *oltp.NewOrderInput) error {
	return s.run(oltp.NewOrder, in)
}

func (s *polledSession) Payment(_ context.Context, in *oltp.PaymentInput) error {
	return s.run(oltp.Payment, in)
}

func (s *polledSession) OrderStatus(_ context.Context, in *oltp.OrderStatusInput) error {
	return s.run(oltp.OrderStatus, in)
}

func (s *polledSession) Delivery(_ context.Context, in *oltp.DeliveryInput) error {
	return s.run(oltp.Delivery, in)
}

func (s *polledSession) StockLevel(_ context.Context, in *oltp.StockLevelInput) error {
	return s.run(oltp.StockLevel, in)
}
