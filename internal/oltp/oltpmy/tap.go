package oltpmy

import (
	"context"
	"encoding/binary"
	"net"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// tap is the network connection go-sql-driver talks through on a session
// the polling driver may take over: the driver connects, authenticates
// and sets the session up as always, and the tap notes what the polling
// driver needs of that: the capabilities the client asked for, and where
// the packets the driver read end. Once the socket is taken, the driver's
// writes (its COM_QUIT at close, which would end the server's session) go
// nowhere and its reads fail.
type tap struct {
	net.Conn
	caps   uint32 // of the client's first packet: its handshake response (or TLS request)
	frames frames
	taken  atomic.Bool
}

// The client capabilities the polling path depends on.
const (
	capCompress     = 0x20
	capSSL          = 0x800
	capDeprecateEOF = 1 << 24 // result sets end with an OK packet, no EOF after the columns
)

// tapDial makes cfg's connections go through a tap, returned once dialled.
func tapDial(cfg *mysql.Config) *tap {
	tp := &tap{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tp.Conn, tp.caps, tp.frames = c, 0, frames{} // database/sql may dial again after a bad connection
		return tp, nil
	}
	return tp
}

func (t *tap) Read(b []byte) (int, error) {
	if t.taken.Load() {
		return 0, net.ErrClosed
	}
	n, err := t.Conn.Read(b)
	t.frames.feed(b[:n])
	return n, err
}

// Write swallows what the driver writes once the socket is taken: failing
// it would make the driver log the error on every session's close.
func (t *tap) Write(b []byte) (int, error) {
	if t.taken.Load() {
		return len(b), nil
	}
	if t.caps == 0 && len(b) >= 8 {
		t.caps = binary.LittleEndian.Uint32(b[4:])
	}
	return t.Conn.Write(b)
}

// unpolled says why the polling driver cannot speak this connection's
// protocol ("" when it can): it reads plain packets only.
func (t *tap) unpolled() string {
	switch {
	case t.caps&capSSL != 0:
		return "the connection is encrypted (TLS), which the polling driver does not speak"
	case t.caps&capCompress != 0:
		return "the connection is compressed, which the polling driver does not speak"
	}
	return ""
}

// frames follows the packet boundaries of the bytes the driver read.
type frames struct {
	hdr  [4]byte
	nhdr int // bytes of the next packet's header read
	left int // bytes of the current packet's payload still to come
}

func (f *frames) feed(b []byte) {
	for len(b) > 0 {
		if f.left > 0 {
			k := min(f.left, len(b))
			f.left, b = f.left-k, b[k:]
			continue
		}
		k := copy(f.hdr[f.nhdr:], b)
		f.nhdr, b = f.nhdr+k, b[k:]
		if f.nhdr == len(f.hdr) {
			f.left, f.nhdr = int(f.hdr[0])|int(f.hdr[1])<<8|int(f.hdr[2])<<16, 0
		}
	}
}

// whole says the bytes read end where a packet does: the driver, which
// reads ahead into its buffer, holds no part of a packet it did not
// parse. (A whole packet beyond the last answer would be one the server
// sent unasked, which it does not on a live session.)
func (f *frames) whole() bool { return f.nhdr == 0 && f.left == 0 }
