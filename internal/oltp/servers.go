package oltp

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/fault"
)

// CheckServers refuses what a load of cfg.Users cannot do on a target of
// that many servers (--instances, a cluster's nodes): one process's share
// of them, one server's connection pool, or servers left without a user.
// The runner asks it before anything starts.
func CheckServers(cfg RunConfig, servers int) error {
	if servers <= 1 {
		return nil
	}
	switch {
	case !cfg.Partition.Whole():
		return fault.Input("drop --partition, or run each server apart", "--partition splits the load over processes, and this target has %d servers", servers)
	case cfg.pooled():
		return fault.Input("drop --connections", "--connections pools one server's connections, and this target has %d servers", servers)
	case cfg.Users > 0 && cfg.Users < servers:
		return fault.Input(fmt.Sprintf("give --users %d or more", servers), "%d users leave some of the %d servers without load", cfg.Users, servers)
	}
	return nil
}
