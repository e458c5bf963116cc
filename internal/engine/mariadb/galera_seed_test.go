package mariadb

import (
	"errors"
	"testing"
)

// What a joiner's failure leads to: one that never reached the cluster
// (its group communication did not open) starts once more; one that
// failed for want of a state transfer is copied over (calibra's nodes
// take no full one by network); one that fails on its own data keeps its
// failure, which a copy would hide from the power-loss audit.
func TestWhatAJoinersFailureLeadsTo(t *testing.T) {
	for _, c := range []struct {
		words         string
		again, copied bool
	}{
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] WSREP: failed to open gcomm backend connection: 3: x | [ERROR] WSREP: ./gcs/src/gcs_core.cpp:gcs_core_open():256: Failed to open backend connection: -3 (No such process) | [ERROR] Aborting", true, false},
		{"the Galera node 3 of 3 did not join the cluster: the MariaDB server exited while starting: 2026-11-28 13:04:06 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:gcs_group_handle_join_msg():1225: Will never receive state. Need to abort.", false, true},
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [Warning] WSREP: 1.0 (node-1): State transfer to 0.0 (node-2) failed: Operation not supported", false, true},
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] InnoDB: Page [page id: space=5, page number=3] log sequence number 123 is in the future", false, false},
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] InnoDB: Tablespace 5 was not found at ./calibra/stock.ibd", false, false},
	} {
		err := errors.New(c.words)
		if again, copied := unreached(err), needsCopy(err); again != c.again || copied != c.copied {
			t.Errorf("%q: started again %v, copied %v; want %v and %v", c.words, again, copied, c.again, c.copied)
		}
	}
}
