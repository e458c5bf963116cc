package durability

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
)

// A cluster's cycle is its worst node: the most acknowledged commits lost,
// a broken consistency condition wherever it broke, and a node whose data
// differ from node 1's makes the cycle corrupt, even when each node alone
// is consistent and lost nothing.
func TestAClusterCycleIsItsWorstNode(t *testing.T) {
	fp := func(orders int64) []int64 {
		f := make([]int64, len(oltp.FingerprintNames))
		f[0] = orders
		return f
	}
	node := func(lost, inFlight int64, consistent bool, orders int64) nodeCheck {
		return nodeCheck{cycle: results.DurabilityCycle{LostAcknowledged: lost, CommittedUnacknowledged: inFlight,
			Consistency: &results.Consistency{OK: consistent, Checks: []results.Check{{ID: "3.3.2.1", OK: consistent}}}}, fingerprint: fp(orders)}
	}
	rejoined := []string{"bootstrap", "ist", "copy of node 1"}
	for _, c := range []struct {
		name    string
		nodes   []nodeCheck
		want    Class
		lost    int64
		differs string // node 3's
	}{
		{"all agree", []nodeCheck{node(0, 1, true, 10), node(0, 1, true, 10), node(0, 1, true, 10)}, InFlight, 0, ""},
		{"a joiner lost commits", []nodeCheck{node(0, 0, true, 10), node(0, 0, true, 10), node(3, 0, true, 7)}, Corrupt, 3, "orders 7 against node 1's 10"},
		{"a joiner differs", []nodeCheck{node(0, 0, true, 10), node(0, 0, true, 10), node(0, 0, true, 11)}, Corrupt, 0, "orders 11 against node 1's 10"},
		{"a joiner broken", []nodeCheck{node(0, 0, true, 10), node(0, 0, false, 10), node(0, 0, true, 10)}, Corrupt, 0, ""},
	} {
		var cyc results.DurabilityCycle
		mergeNodes(&cyc, c.nodes, rejoined)
		if got := outcome(&cyc, ""); got != c.want || cyc.LostAcknowledged != c.lost || len(cyc.Nodes) != 3 {
			t.Errorf("%s: outcome %s, %d lost, %d nodes; want %s, %d lost, 3 nodes", c.name, got, cyc.LostAcknowledged, len(cyc.Nodes), c.want, c.lost)
			continue
		}
		if n := cyc.Nodes[2]; n.Differs != c.differs || n.Rejoined != "copy of node 1" {
			t.Errorf("%s: node 3 %+v, want differs %q", c.name, n, c.differs)
		}
		agree := cyc.Consistency.Checks[len(cyc.Consistency.Checks)-1]
		if agree.ID != "nodes" || agree.OK != (c.differs == "") || (c.differs != "" && !strings.Contains(agree.Detail, "node 3: "+c.differs)) {
			t.Errorf("%s: the nodes' check %+v", c.name, agree)
		}
	}
}

// Each node writes its own files, so a page a cut tore on one node alone
// is the cycle's: the cycle is torn-page, its damaged pages name the node,
// and the node's own figures say which one.
func TestAClusterCycleCountsEveryNodesPages(t *testing.T) {
	node := func(damaged ...string) nodeCheck {
		return nodeCheck{cycle: results.DurabilityCycle{Consistency: &results.Consistency{OK: true}, PageCheck: "CHECK TABLE",
			PagesDamaged: int64(len(damaged)), DamagedPages: damaged}, fingerprint: make([]int64, len(oltp.FingerprintNames))}
	}
	var cyc results.DurabilityCycle
	mergeNodes(&cyc, []nodeCheck{node(), node(), node("table stock: Error: corrupt")}, nil)
	if got := outcome(&cyc, ""); got != TornPage || cyc.PagesDamaged != 1 || cyc.PageCheck != "CHECK TABLE" {
		t.Fatalf("outcome %s, %d pages damaged, check %q; want torn-page, 1, CHECK TABLE", got, cyc.PagesDamaged, cyc.PageCheck)
	}
	if len(cyc.DamagedPages) != 1 || cyc.DamagedPages[0] != "node 3: table stock: Error: corrupt" || cyc.Nodes[2].PagesDamaged != 1 || cyc.Nodes[0].PagesDamaged != 0 {
		t.Fatalf("damaged pages %q, nodes %+v", cyc.DamagedPages, cyc.Nodes)
	}
}
