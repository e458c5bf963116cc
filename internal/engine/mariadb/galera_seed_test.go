package mariadb

import (
	"errors"
	"testing"
)

// A joiner is copied over only when it failed for want of a state
// transfer (calibra's nodes take no full one by network); a node that
// fails on its own data keeps its failure, which a copy would hide from
// the power-loss audit.
func TestOnlyAJoinerWithoutStateIsCopied(t *testing.T) {
	for _, c := range []struct {
		words string
		copy  bool
	}{
		{"the Galera node 3 of 3 did not join the cluster: the MariaDB server exited while starting: 2026-11-28 13:04:06 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:gcs_group_handle_join_msg():1225: Will never receive state. Need to abort.", true},
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [Warning] WSREP: 1.0 (node-1): State transfer to 0.0 (node-2) failed: Operation not supported", true},
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] InnoDB: Page [page id: space=5, page number=3] log sequence number 123 is in the future", false},
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] InnoDB: Tablespace 5 was not found at ./calibra/stock.ibd", false},
	} {
		if got := needsCopy(errors.New(c.words)); got != c.copy {
			t.Errorf("needsCopy(%q) = %v, want %v", c.words, got, c.copy)
		}
	}
}

// A joiner that never reached the cluster starts once more; one that
// reached it and failed there keeps its failure.
func TestAJoinerThatNeverReachedTheClusterStartsAgain(t *testing.T) {
	for _, c := range []struct {
		words string
		again bool
	}{
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] WSREP: failed to open gcomm backend connection: 3: x | [ERROR] WSREP: ./gcs/src/gcs_core.cpp:gcs_core_open():256: Failed to open backend connection: -3 (No such process) | [ERROR] Aborting", true},
		{"the Galera node 3 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] WSREP: ./gcs/src/gcs_group.cpp:gcs_group_handle_join_msg():1225: Will never receive state. Need to abort.", false},
		{"the Galera node 2 of 3 did not join the cluster: the MariaDB server exited while starting: [ERROR] InnoDB: Tablespace 5 was not found at ./calibra/stock.ibd", false},
	} {
		if got := unreached(errors.New(c.words)); got != c.again {
			t.Errorf("unreached(%q) = %v, want %v", c.words, got, c.again)
		}
	}
}
