package lab

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// memDisk is a Backend in memory that counts flushes.
type memDisk struct {
	data    []byte
	flushes int
}

func (m *memDisk) Size() int64                       { return int64(len(m.data)) }
func (m *memDisk) ReadAt(p []byte, off int64) error  { copy(p, m.data[off:]); return nil }
func (m *memDisk) WriteAt(p []byte, off int64) error { copy(m.data[off:], p); return nil }
func (m *memDisk) Flush() error                      { m.flushes++; return nil }

// nbdClient speaks the protocol as libnbd does: fixed newstyle, NBD_OPT_GO.
type nbdClient struct {
	t    *testing.T
	conn io.ReadWriter
}

func (c nbdClient) read(n int) []byte {
	b := make([]byte, n)
	if _, err := io.ReadFull(c.conn, b); err != nil {
		c.t.Fatal(err)
	}
	return b
}

// handshake negotiates up to transmission and returns the export's size
// and transmission flags.
func (c nbdClient) handshake() (size int64, trans uint16) {
	hello := c.read(18)
	if be.Uint64(hello) != nbdMagic || be.Uint64(hello[8:]) != nbdOptMagic || be.Uint16(hello[16:])&flagFixedNewstyle == 0 {
		c.t.Fatalf("hello %x", hello)
	}
	var opt []byte
	opt = be.AppendUint32(opt, flagFixedNewstyle|flagCNoZeroes)
	opt = be.AppendUint64(opt, nbdOptMagic)
	opt = be.AppendUint32(opt, optGo)
	opt = be.AppendUint32(opt, 6)
	opt = append(opt, 0, 0, 0, 0, 0, 0) // empty name, no info requests
	if _, err := c.conn.Write(opt); err != nil {
		c.t.Fatal(err)
	}
	for {
		h := c.read(20)
		if be.Uint64(h) != nbdRepMagic {
			c.t.Fatalf("option reply magic %x", h)
		}
		data := c.read(int(be.Uint32(h[16:])))
		if typ := be.Uint32(h[12:]); typ == repAck {
			return size, trans
		} else if typ == repInfo && be.Uint16(data) == infoExport {
			size, trans = int64(be.Uint64(data[2:])), be.Uint16(data[10:])
		}
	}
}

func (c nbdClient) request(flags, typ uint16, handle uint64, off int64, n uint32, payload []byte) {
	var r []byte
	r = be.AppendUint32(r, nbdReqMagic)
	r = be.AppendUint16(r, flags)
	r = be.AppendUint16(r, typ)
	r = be.AppendUint64(r, handle)
	r = be.AppendUint64(r, uint64(off))
	r = be.AppendUint32(r, n)
	if _, err := c.conn.Write(append(r, payload...)); err != nil {
		c.t.Fatal(err)
	}
}

func (c nbdClient) reply(handle uint64, n int) (syscall.Errno, []byte) {
	h := c.read(16)
	if be.Uint32(h) != nbdSimpleReply || be.Uint64(h[8:]) != handle {
		c.t.Fatalf("reply %x, want handle %d", h, handle)
	}
	if errno := syscall.Errno(be.Uint32(h[4:])); errno != 0 {
		return errno, nil
	}
	return 0, c.read(n)
}

// TestServeNBD: a write with FUA, a read of it, a FLUSH, a read past the
// end and a disconnect.
func TestServeNBD(t *testing.T) {
	disk := &memDisk{data: make([]byte, 1<<20)}
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeNBD(server, server, disk) }()
	c := nbdClient{t, client}
	size, trans := c.handshake()
	if trans&transSendFlush == 0 {
		t.Fatalf("flush not advertised: the client would never send one")
	}
	if size != disk.Size() {
		t.Fatalf("export size %d, want %d", size, disk.Size())
	}
	payload := bytes.Repeat([]byte{0xAB}, 8192)
	c.request(cmdFlFUA, cmdWrite, 1, 4096, 8192, payload)
	if errno, _ := c.reply(1, 0); errno != 0 || disk.flushes != 1 {
		t.Fatalf("write with FUA: errno %v, %d flushes (want 1)", errno, disk.flushes)
	}
	c.request(0, cmdRead, 2, 4096, 8192, nil)
	if errno, got := c.reply(2, 8192); errno != 0 || !bytes.Equal(got, payload) {
		t.Fatalf("read back: errno %v, equal %v", errno, bytes.Equal(got, payload))
	}
	c.request(0, cmdFlush, 3, 0, 0, nil)
	if errno, _ := c.reply(3, 0); errno != 0 || disk.flushes != 2 {
		t.Fatalf("flush: errno %v, %d flushes (want 2)", errno, disk.flushes)
	}
	c.request(0, cmdRead, 4, disk.Size()-512, 4096, nil)
	if errno, _ := c.reply(4, 0); errno != syscall.EINVAL {
		t.Fatalf("read past the end: errno %v, want EINVAL", errno)
	}
	c.request(0, cmdDisc, 5, 0, 0, nil)
	if err := <-done; err != nil {
		t.Fatalf("serve after disconnect: %v", err)
	}
}

// gatedDisk holds every read until released, telling arrived of each.
type gatedDisk struct {
	memDisk
	arrived chan struct{}
	release chan struct{}
}

func (g *gatedDisk) ReadAt(p []byte, off int64) error {
	g.arrived <- struct{}{}
	<-g.release
	return g.memDisk.ReadAt(p, off)
}

// TestServeListenerServesConnectionsAtOnce: libnbd keeps about two
// requests in flight on one connection, so the lab's promise of spindles
// rests on nbdfuse's several connections (multi-conn), which it opens only
// to a server that advertises them. The server must advertise them, reach
// the platter with one request of each connection at once (the queue depth
// the spindles see), and end when the last connection closes.
func TestServeListenerServesConnectionsAtOnce(t *testing.T) {
	p, err := Parse("hdd")
	if err != nil {
		t.Fatal(err)
	}
	conns := p.Connections()
	if conns < 2*p.Spindles {
		t.Fatalf("%d connections for %d spindles: libnbd's two requests a connection cannot keep them busy", conns, p.Spindles)
	}
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "nbd.sock"))
	if err != nil {
		t.Fatal(err)
	}
	disk := &gatedDisk{memDisk: memDisk{data: make([]byte, 1<<20)}, arrived: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- ServeListener(l, disk) }()
	clients := make([]nbdClient, conns)
	for i := range clients {
		conn, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		clients[i] = nbdClient{t, conn}
		if _, trans := clients[i].handshake(); trans&transMultiConn == 0 {
			t.Fatalf("multi-conn not advertised: nbdfuse would open one connection")
		}
		clients[i].request(0, cmdRead, uint64(i), int64(i)*4096, 4096, nil)
	}
	for seen := 0; seen < conns; seen++ {
		select {
		case <-disk.arrived:
		case <-time.After(time.Minute): // a hang, not a measurement
			t.Fatalf("the backend saw %d of %d connections' reads at once", seen, conns)
		}
	}
	close(disk.release)
	for i, c := range clients {
		if errno, _ := c.reply(uint64(i), 4096); errno != 0 {
			t.Fatalf("read on connection %d: %v", i, errno)
		}
		c.request(0, cmdDisc, 99, 0, 0, nil)
	}
	if err := <-done; err != nil {
		t.Fatalf("the server after every connection closed: %v", err)
	}
}
