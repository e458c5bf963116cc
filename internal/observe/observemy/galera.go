package observemy

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/observe"
)

// clusterSource observes a Galera cluster: node 1 as a single server is
// observed (InnoDB, waits), and every node's replication counters
// besides, each on a connection of its own.
type clusterSource struct {
	*source
	nodes []*source
}

func newClusterSource(c *mariadb.Cluster) (*clusterSource, error) {
	cs := &clusterSource{}
	for _, t := range c.Nodes() {
		s, err := targetSource(t)
		if err != nil {
			return nil, err
		}
		cs.nodes = append(cs.nodes, s)
	}
	cs.source = cs.nodes[0]
	return cs, nil
}

func (cs *clusterSource) Open(ctx context.Context, proc string) (observe.DBConn, observe.DBInfo, error) {
	conn, info, err := cs.source.Open(ctx, proc)
	if err != nil {
		return nil, info, err
	}
	cc, err := cs.withNodes(ctx, conn.(*myConn))
	return cc, info, err
}

func (cs *clusterSource) Connect(ctx context.Context) (observe.DBConn, error) {
	conn, err := cs.source.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return cs.withNodes(ctx, conn.(*myConn))
}

func (cs *clusterSource) withNodes(ctx context.Context, first *myConn) (*clusterConn, error) {
	cc := &clusterConn{myConn: first, nodes: []*sql.DB{first.db}}
	for _, n := range cs.nodes[1:] {
		db, err := n.connect(ctx)
		if err != nil {
			cc.Close()
			return nil, err
		}
		cc.nodes = append(cc.nodes, db)
	}
	return cc, nil
}

// clusterConn is node 1's sampler connection with one on each other node.
type clusterConn struct {
	*myConn
	nodes []*sql.DB // node 1's is myConn's
}

func (cc *clusterConn) Close() {
	for _, db := range cc.nodes {
		db.Close()
	}
}

// wsrepStatus are the replication counters read per node: cumulative
// counts since the node started (wsrep_flow_control_paused, a fraction
// since the last FLUSH STATUS, is not one; its _ns twin is).
var wsrepStatus = map[string]func(n *observe.NodeCounters) **int64{
	"wsrep_flow_control_paused_ns": func(n *observe.NodeCounters) **int64 { return &n.FlowControlPausedNs },
	"wsrep_flow_control_sent":      func(n *observe.NodeCounters) **int64 { return &n.FlowControlSent },
	"wsrep_flow_control_recv":      func(n *observe.NodeCounters) **int64 { return &n.FlowControlRecv },
	"wsrep_local_cert_failures":    func(n *observe.NodeCounters) **int64 { return &n.CertFailures },
	"wsrep_local_bf_aborts":        func(n *observe.NodeCounters) **int64 { return &n.BFAborts },
	"wsrep_replicated":             func(n *observe.NodeCounters) **int64 { return &n.Replicated },
}

func (cc *clusterConn) Counters(ctx context.Context) (observe.DBCounters, error) {
	c, err := cc.myConn.Counters(ctx)
	if err != nil {
		return c, err
	}
	names := make([]string, 0, len(wsrepStatus))
	for k := range wsrepStatus {
		names = append(names, "'"+strings.ToUpper(k)+"'")
	}
	q := "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN (" + strings.Join(names, ", ") + ")"
	for i, db := range cc.nodes {
		n := observe.NodeCounters{Node: i + 1}
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return c, err
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return c, err
			}
			if x, err := strconv.ParseInt(v, 10, 64); err == nil {
				*wsrepStatus[strings.ToLower(k)](&n) = ptr(x)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return c, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c, nil
}
