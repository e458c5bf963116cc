package lab

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
)

// Backend is a block device an NBD connection serves.
type Backend interface {
	Size() int64
	ReadAt(p []byte, off int64) error
	WriteAt(p []byte, off int64) error
	// Flush returns once every write that completed before it is durable.
	Flush() error
}

// The NBD protocol's fixed-newstyle handshake and simple replies
// (github.com/NetworkBlockDevice/nbd, doc/proto.md): the part nbdfuse
// (libnbd) needs. No NBD library for Go is in reach here, and this part is
// small.
const (
	nbdMagic       = 0x4e42444d41474943 // "NBDMAGIC"
	nbdOptMagic    = 0x49484156454f5054 // "IHAVEOPT"
	nbdRepMagic    = 0x3e889045565a9
	nbdReqMagic    = 0x25609513
	nbdSimpleReply = 0x67446698

	flagFixedNewstyle = 1 << 0
	flagNoZeroes      = 1 << 1
	flagCNoZeroes     = 1 << 1

	optExportName = 1
	optAbort      = 2
	optInfo       = 6
	optGo         = 7

	repAck         = 1
	repInfo        = 3
	repErrUnsup    = 1<<31 + 1
	infoExport     = 0
	infoBlockSize  = 3
	transHasFlags  = 1 << 0
	transSendFlush = 1 << 2
	transSendFUA   = 1 << 3
	// transMultiConn: a FLUSH on any connection covers the writes done on
	// all (one Backend serves them), so a client may open several.
	transMultiConn = 1 << 8

	cmdRead  = 0
	cmdWrite = 1
	cmdDisc  = 2
	cmdFlush = 3
	cmdFlFUA = 1 << 0

	maxRequest = 32 << 20
)

var be = binary.BigEndian

// ServeListener serves b on every connection l accepts, concurrently, and
// returns once the last of them has ended (the client unmounted): libnbd
// keeps about two requests in flight on one connection, so nbdfuse needs
// several (multi-conn) to keep more spindles busy than that.
func ServeListener(l net.Listener, b Backend) error {
	var mu sync.Mutex
	var errs []error
	open := 0
	var wg sync.WaitGroup
	for {
		conn, err := l.Accept()
		if err != nil {
			wg.Wait()
			if open == 0 && errors.Is(err, net.ErrClosed) {
				err = nil // closed by the last connection's end
			}
			return errors.Join(append(errs, err)...)
		}
		mu.Lock()
		open++
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := ServeNBD(conn, conn, b)
			conn.Close()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			if open--; open == 0 {
				l.Close() // ends Accept; a connection still in its backlog is refused
			}
		}()
	}
}

// ServeNBD serves b on one NBD connection until the client disconnects.
// Requests run concurrently, as a device's queue does; each reply is
// written whole.
func ServeNBD(r io.Reader, w io.Writer, b Backend) error {
	c := &nbdConn{br: bufio.NewReaderSize(r, 1<<20), w: w, b: b}
	if err := handshake(c.br, w, b.Size()); err != nil {
		return err
	}
	defer c.wg.Wait()
	hdr := make([]byte, 28)
	for {
		if _, err := io.ReadFull(c.br, hdr); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
		if done, err := c.serve(hdr); done || err != nil {
			return err
		}
	}
}

// nbdConn is one NBD connection to b: requests run side by side, and
// each reply is written whole.
type nbdConn struct {
	br  *bufio.Reader
	w   io.Writer
	b   Backend
	wmu sync.Mutex
	wg  sync.WaitGroup
}

func (c *nbdConn) reply(handle uint64, errno syscall.Errno, data []byte) {
	buf := make([]byte, 16, 16+len(data))
	be.PutUint32(buf[0:], nbdSimpleReply)
	be.PutUint32(buf[4:], uint32(errno))
	be.PutUint64(buf[8:], handle)
	buf = append(buf, data...)
	c.wmu.Lock()
	_, _ = c.w.Write(buf) // a dead client ends the read loop
	c.wmu.Unlock()
}

// async runs do beside the connection's other requests.
func (c *nbdConn) async(do func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		do()
	}()
}

// serve answers the request whose header is hdr (a write's data follows
// it), reporting whether the client disconnected.
func (c *nbdConn) serve(hdr []byte) (bool, error) {
	if be.Uint32(hdr[0:]) != nbdReqMagic {
		return false, fmt.Errorf("nbd: bad request magic %#x", be.Uint32(hdr[0:]))
	}
	flags, typ := be.Uint16(hdr[4:]), be.Uint16(hdr[6:])
	handle, off, n := be.Uint64(hdr[8:]), int64(be.Uint64(hdr[16:])), int64(be.Uint32(hdr[24:]))
	bad := n > maxRequest || off < 0 || off+n > c.b.Size()
	switch typ {
	case cmdRead:
		if bad {
			c.reply(handle, syscall.EINVAL, nil)
			return false, nil
		}
		c.async(func() {
			buf := make([]byte, n)
			if err := c.b.ReadAt(buf, off); err != nil {
				c.reply(handle, syscall.EIO, nil)
				return
			}
			c.reply(handle, 0, buf)
		})
	case cmdWrite:
		if n > maxRequest {
			return false, fmt.Errorf("nbd: write of %d bytes", n)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(c.br, buf); err != nil {
			return false, err
		}
		if bad {
			c.reply(handle, syscall.EINVAL, nil)
			return false, nil
		}
		c.async(func() {
			err := c.b.WriteAt(buf, off)
			if err == nil && flags&cmdFlFUA != 0 {
				err = c.b.Flush()
			}
			c.reply(handle, errnoOf(err), nil)
		})
	case cmdFlush:
		c.async(func() { c.reply(handle, errnoOf(c.b.Flush()), nil) })
	case cmdDisc:
		return true, nil
	default:
		c.reply(handle, syscall.EINVAL, nil)
	}
	return false, nil
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	return syscall.EIO
}

// handshake runs the fixed-newstyle negotiation up to transmission.
func handshake(r io.Reader, w io.Writer, size int64) error {
	hello := make([]byte, 18)
	be.PutUint64(hello[0:], nbdMagic)
	be.PutUint64(hello[8:], nbdOptMagic)
	be.PutUint16(hello[16:], flagFixedNewstyle|flagNoZeroes)
	if _, err := w.Write(hello); err != nil {
		return err
	}
	var cflags uint32
	if err := binary.Read(r, be, &cflags); err != nil {
		return fmt.Errorf("nbd handshake: %w", err)
	}
	trans := uint16(transHasFlags | transSendFlush | transSendFUA | transMultiConn)
	optReply := func(opt, typ uint32, data []byte) error {
		buf := make([]byte, 20, 20+len(data))
		be.PutUint64(buf[0:], nbdRepMagic)
		be.PutUint32(buf[8:], opt)
		be.PutUint32(buf[12:], typ)
		be.PutUint32(buf[16:], uint32(len(data)))
		_, err := w.Write(append(buf, data...))
		return err
	}
	for {
		var h struct {
			Magic    uint64
			Opt, Len uint32
		}
		if err := binary.Read(r, be, &h); err != nil {
			return fmt.Errorf("nbd handshake: %w", err)
		}
		if h.Magic != nbdOptMagic || h.Len > 1<<16 {
			return fmt.Errorf("nbd handshake: bad option header")
		}
		data := make([]byte, h.Len)
		if _, err := io.ReadFull(r, data); err != nil {
			return err
		}
		switch h.Opt {
		case optExportName:
			buf := make([]byte, 10, 134)
			be.PutUint64(buf[0:], uint64(size))
			be.PutUint16(buf[8:], trans)
			if cflags&flagCNoZeroes == 0 {
				buf = buf[:134]
			}
			_, err := w.Write(buf)
			return err
		case optInfo, optGo:
			info := make([]byte, 12)
			be.PutUint16(info[0:], infoExport)
			be.PutUint64(info[2:], uint64(size))
			be.PutUint16(info[10:], trans)
			if err := optReply(h.Opt, repInfo, info); err != nil {
				return err
			}
			bs := make([]byte, 14)
			be.PutUint16(bs[0:], infoBlockSize)
			be.PutUint32(bs[2:], 512)
			be.PutUint32(bs[6:], blockSize)
			be.PutUint32(bs[10:], maxRequest)
			if err := optReply(h.Opt, repInfo, bs); err != nil {
				return err
			}
			if err := optReply(h.Opt, repAck, nil); err != nil {
				return err
			}
			if h.Opt == optGo {
				return nil
			}
		case optAbort:
			_ = optReply(h.Opt, repAck, nil)
			return io.EOF
		default:
			if err := optReply(h.Opt, repErrUnsup, nil); err != nil {
				return err
			}
		}
	}
}
