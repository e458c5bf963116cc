package oltp

import (
	"errors"
	"testing"
)

// A fault on a cluster's node names the node and the log it writes
// (logs/server-K.log): a cluster run writes no logs/server.log.
func TestFaultNamesTheMemberAndItsLog(t *testing.T) {
	lost := errors.New("the connection to the server was lost (EOF): the server may have stopped, see logs/server.log")
	tg := &members{ds: make([]Dialect, 3), shared: true}
	if got, want := tg.at(4).fault(lost).Error(), "node 2 of 3: the connection to the server was lost (EOF): the server may have stopped, see logs/server-2.log"; got != want {
		t.Errorf("galera:\n got %s\nwant %s", got, want)
	}
	tg.shared = false
	if got, want := tg.at(2).fault(lost).Error(), "instance 3 of 3: the connection to the server was lost (EOF): the server may have stopped, see logs/server-3.log"; got != want {
		t.Errorf("instances:\n got %s\nwant %s", got, want)
	}
	if got := (&members{ds: make([]Dialect, 1)}).at(0).fault(lost); got != lost {
		t.Errorf("one server: %v", got)
	}
}
