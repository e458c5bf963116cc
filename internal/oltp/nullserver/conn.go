package nullserver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// conn is one session.
type conn struct {
	srv   *Server
	r     *bufio.Reader
	w     *bufio.Writer
	out   []byte // messages not yet written
	stmts map[string]*stmt
	// The unnamed statement, and the portal bound last (calibra binds
	// only the unnamed portal).
	unnamed *stmt
	portal  struct {
		s    *stmt
		args [][]byte
		fmts []int16
	}
	inTx    bool  // in BEGIN ... COMMIT
	failed  bool  // an error: skip to Sync
	ran     bool  // an Execute outside BEGIN since the last Sync
	pending int64 // New-Orders of the explicit transaction
	nextOID int64
	body    []byte
}

// serve answers the startup, then every message, until Terminate.
func (c *conn) serve() error {
	if err := c.startup(); err != nil {
		return err
	}
	for {
		typ, body, err := readMsg(c.r, c.body)
		if err != nil {
			return err
		}
		c.body = body[:0]
		if typ == 'X' {
			return nil
		}
		if err := c.message(typ, body); err != nil {
			return err
		}
		if typ == 'S' || typ == 'Q' || typ == 'H' {
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
}

func (c *conn) flush() error {
	if _, err := c.w.Write(c.out); err != nil {
		return err
	}
	c.out = c.out[:0]
	return c.w.Flush()
}

// startup refuses TLS and GSS encryption and lets any user in.
func (c *conn) startup() error {
	for {
		var h [4]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(h[:])) - 4
		if n < 4 || n > 1<<16 {
			return fmt.Errorf("a startup message of %d bytes", n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.r, body); err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(body)
		if code == 80877103 || code == 80877104 { // SSLRequest, GSSENCRequest
			if err := c.w.WriteByte('N'); err != nil {
				return err
			}
			if err := c.w.Flush(); err != nil {
				return err
			}
			continue
		}
		c.msg('R', 0, 0, 0, 0) // AuthenticationOk
		for _, p := range [][2]string{{"server_version", "16.0"}, {"server_encoding", "UTF8"}, {"client_encoding", "UTF8"},
			{"DateStyle", "ISO, MDY"}, {"integer_datetimes", "on"}, {"standard_conforming_strings", "on"}, {"TimeZone", "UTC"}} {
			c.msg('S', cstr(p[0]), cstr(p[1]))
		}
		c.msg('K', 0, 0, 0, 1, 0, 0, 0, 1) // BackendKeyData
		c.ready()
		return c.flush()
	}
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// msg appends a message of the parts given, each a []byte or a byte.
func (c *conn) msg(typ byte, parts ...any) {
	c.out = append(c.out, typ, 0, 0, 0, 0)
	at := len(c.out) - 4
	for _, p := range parts {
		switch p := p.(type) {
		case []byte:
			c.out = append(c.out, p...)
		case int:
			c.out = append(c.out, byte(p))
		}
	}
	binary.BigEndian.PutUint32(c.out[at:], uint32(len(c.out)-at))
}

// begin starts a message whose body the caller appends; end sets its
// length.
func (c *conn) begin(typ byte) int {
	c.out = append(c.out, typ, 0, 0, 0, 0)
	return len(c.out) - 4
}

func (c *conn) end(at int) { binary.BigEndian.PutUint32(c.out[at:], uint32(len(c.out)-at)) }

func (c *conn) ready() {
	status := byte('I')
	if c.inTx {
		status = 'T'
	}
	c.msg('Z', int(status))
}

// fail answers an ErrorResponse and skips to the next Sync.
func (c *conn) fail(code, message string) {
	at := c.begin('E')
	c.out = append(c.out, 'S')
	c.out = append(c.out, "ERROR\x00"...)
	c.out = append(c.out, 'V')
	c.out = append(c.out, "ERROR\x00"...)
	c.out = append(c.out, 'C')
	c.out = append(c.out, code...)
	c.out = append(c.out, 0, 'M')
	c.out = append(c.out, message...)
	c.out = append(c.out, 0, 0)
	c.end(at)
	c.failed = true
}

// message answers one message of the simple or extended protocol.
func (c *conn) message(typ byte, body []byte) error {
	if c.failed && typ != 'S' && typ != 'Q' {
		return nil
	}
	switch typ {
	case 'Q':
		c.query(string(until0(body)))
	case 'P':
		c.parse(body)
	case 'B':
		return c.bind(body)
	case 'D':
		c.describe(body)
	case 'E':
		c.execute()
	case 'C':
		c.msg('3') // CloseComplete
	case 'S':
		c.sync()
	case 'H':
	default:
		return fmt.Errorf("a message of type %q", typ)
	}
	return nil
}

func until0(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// sync ends the implicit transaction of the Executes since the last
// Sync, outside BEGIN.
func (c *conn) sync() {
	if c.ran && !c.inTx && !c.failed {
		c.srv.xacts.Add(1)
	}
	c.ran, c.failed = false, false
	c.ready()
}

// query answers a simple-protocol query: one statement, one transaction.
func (c *conn) query(sql string) {
	s := lookup(sql)
	if s == nil {
		c.fail("42601", "the null server has no answer for: "+sql)
		c.failed = false
		c.ready()
		return
	}
	if len(s.cols) > 0 {
		c.rowDescription(s, nil)
	}
	c.run(s, nil, nil)
	if !c.inTx && s.kind != kCommit && s.kind != kRollback {
		c.srv.xacts.Add(1)
	}
	c.ready()
}

func (c *conn) parse(body []byte) {
	name := string(until0(body))
	rest := body[len(name)+1:]
	sql := string(until0(rest))
	s := lookup(sql)
	if s == nil {
		c.fail("42601", "the null server has no answer for: "+sql)
		return
	}
	if name == "" {
		c.unnamed = s
	} else {
		c.stmts[name] = s
	}
	c.msg('1') // ParseComplete
}
