package lab

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"syscall"
	"testing"
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

// TestServeNBD speaks the protocol as libnbd does: fixed newstyle, NBD_OPT_GO,
// then a write with FUA, a read of it, a FLUSH, a read past the end and a
// disconnect.
func TestServeNBD(t *testing.T) {
	disk := &memDisk{data: make([]byte, 1<<20)}
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeNBD(server, server, disk) }()
	be := binary.BigEndian
	read := func(n int) []byte {
		b := make([]byte, n)
		if _, err := io.ReadFull(client, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	hello := read(18)
	if be.Uint64(hello) != nbdMagic || be.Uint64(hello[8:]) != nbdOptMagic || be.Uint16(hello[16:])&flagFixedNewstyle == 0 {
		t.Fatalf("hello %x", hello)
	}
	var opt []byte
	opt = be.AppendUint32(opt, flagFixedNewstyle|flagCNoZeroes)
	opt = be.AppendUint64(opt, nbdOptMagic)
	opt = be.AppendUint32(opt, optGo)
	opt = be.AppendUint32(opt, 6)
	opt = append(opt, 0, 0, 0, 0, 0, 0) // empty name, no info requests
	if _, err := client.Write(opt); err != nil {
		t.Fatal(err)
	}
	var size int64
	for {
		h := read(20)
		if be.Uint64(h) != nbdRepMagic {
			t.Fatalf("option reply magic %x", h)
		}
		data := read(int(be.Uint32(h[16:])))
		if typ := be.Uint32(h[12:]); typ == repAck {
			break
		} else if typ == repInfo && be.Uint16(data) == infoExport {
			size = int64(be.Uint64(data[2:]))
			if be.Uint16(data[10:])&transSendFlush == 0 {
				t.Fatalf("flush not advertised: the client would never send one")
			}
		}
	}
	if size != disk.Size() {
		t.Fatalf("export size %d, want %d", size, disk.Size())
	}
	request := func(flags, typ uint16, handle uint64, off int64, n uint32, payload []byte) {
		var r []byte
		r = be.AppendUint32(r, nbdReqMagic)
		r = be.AppendUint16(r, flags)
		r = be.AppendUint16(r, typ)
		r = be.AppendUint64(r, handle)
		r = be.AppendUint64(r, uint64(off))
		r = be.AppendUint32(r, n)
		if _, err := client.Write(append(r, payload...)); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(handle uint64, n int) (syscall.Errno, []byte) {
		h := read(16)
		if be.Uint32(h) != nbdSimpleReply || be.Uint64(h[8:]) != handle {
			t.Fatalf("reply %x, want handle %d", h, handle)
		}
		errno := syscall.Errno(be.Uint32(h[4:]))
		if errno != 0 {
			return errno, nil
		}
		return 0, read(n)
	}
	payload := bytes.Repeat([]byte{0xAB}, 8192)
	request(cmdFlFUA, cmdWrite, 1, 4096, 8192, payload)
	if errno, _ := reply(1, 0); errno != 0 || disk.flushes != 1 {
		t.Fatalf("write with FUA: errno %v, %d flushes (want 1)", errno, disk.flushes)
	}
	request(0, cmdRead, 2, 4096, 8192, nil)
	if errno, got := reply(2, 8192); errno != 0 || !bytes.Equal(got, payload) {
		t.Fatalf("read back: errno %v, equal %v", errno, bytes.Equal(got, payload))
	}
	request(0, cmdFlush, 3, 0, 0, nil)
	if errno, _ := reply(3, 0); errno != 0 || disk.flushes != 2 {
		t.Fatalf("flush: errno %v, %d flushes (want 2)", errno, disk.flushes)
	}
	request(0, cmdRead, 4, disk.Size()-512, 4096, nil)
	if errno, _ := reply(4, 0); errno != syscall.EINVAL {
		t.Fatalf("read past the end: errno %v, want EINVAL", errno)
	}
	request(0, cmdDisc, 5, 0, 0, nil)
	if err := <-done; err != nil {
		t.Fatalf("serve after disconnect: %v", err)
	}
}
