// Package nullserver is a PostgreSQL server that does nothing: it speaks
// enough of the wire protocol to take calibra's sessions, its procedures
// mode's prepared calls and its client mode's statements, and answers each
// at once with canned results, so that a run against it measures the
// driver alone (bench/driver-null.sh). It is for tests and benchmarks.
//
// Its counters move as a database's would: every transaction (a Sync
// after an Execute outside BEGIN, a simple query, a COMMIT or ROLLBACK)
// adds one to xact_commit + xact_rollback when it ends, after any read of
// them in it, and every New-Order committed adds one to sum(d_next_o_id).
package nullserver

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// Port is the port in the socket's name, .s.PGSQL.5432.
const Port = 5432

// Server listens on a Unix socket in a directory.
type Server struct {
	Dir        string
	Warehouses int
	Seed       uint64

	ln      net.Listener
	xacts   atomic.Int64 // transactions ended
	orders  atomic.Int64 // New-Orders committed
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing atomic.Bool
}

// Listen starts a server on dir/.s.PGSQL.5432 for a schema of warehouses.
func Listen(dir string, warehouses int) (*Server, error) {
	path := filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", Port))
	_ = os.Remove(path) // safefs: a test server's socket in the directory its test made
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Warehouses: warehouses, Seed: 1, ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// DSN is a connection string for the server.
func (s *Server) DSN() string {
	return fmt.Sprintf("host=%s port=%d user=calibra dbname=calibra sslmode=disable", s.Dir, Port)
}

// Xacts is the transactions ended so far.
func (s *Server) Xacts() int64 { return s.xacts.Load() }

// Close stops listening and ends every connection.
func (s *Server) Close() error {
	s.closing.Store(true)
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			cn := &conn{srv: s, r: bufio.NewReaderSize(c, 16<<10), w: bufio.NewWriterSize(c, 16<<10), stmts: map[string]*stmt{}, nextOID: 3001}
			err := cn.serve()
			if err != nil && !errors.Is(err, io.EOF) && !s.closing.Load() {
				fmt.Fprintf(os.Stderr, "null server: %v\n", err)
			}
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// sumNextOID is sum(d_next_o_id) over the districts: 3001 each at the
// load, one more for every New-Order committed.
func (s *Server) sumNextOID() int64 {
	return int64(s.Warehouses)*tpcc.DistrictsPerWarehouse*3001 + s.orders.Load()
}

// buildInfo is what a complete build records.
func (s *Server) buildInfo() [][2]string {
	consts := tpcc.LoadConstants(tpcc.NewRand(s.Seed, 0xC0))
	return [][2]string{{"warehouses", fmt.Sprint(s.Warehouses)}, {"seed", fmt.Sprint(s.Seed)},
		{"c_last_load", fmt.Sprint(consts.CLast)}, {"complete", "true"}}
}

// readMsg reads one message: its type and body, the body in buf when it
// fits.
func readMsg(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(h[1:])) - 4
	if n < 0 || n > 1<<24 {
		return 0, nil, fmt.Errorf("a message of %d bytes", n)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return h[0], buf, err
}
