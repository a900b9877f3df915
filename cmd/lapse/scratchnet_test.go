//go:build linux

package main

import (
	"encoding/binary"
	"io"
	"net"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"unsafe"
)

// scratchNet is a network namespace of its own, as a container has: only a
// loopback interface, so lapse binds its default ports there without
// meeting another process's. One goroutine, locked to the OS thread that
// entered the namespace, starts the processes that live in it and dials
// into it; forward makes its ports reachable from the test.
type scratchNet struct {
	reqs chan func()
	done chan struct{}
}

// newScratchNet enters a new network namespace on a thread of its own and
// brings its loopback interface up. It needs root (CAP_SYS_ADMIN).
func newScratchNet() (*scratchNet, error) {
	n := &scratchNet{reqs: make(chan func()), done: make(chan struct{})}
	errc := make(chan error)
	go func() {
		defer close(n.done)
		// Never unlocked: the thread is in another namespace, and Go ends
		// a thread whose locked goroutine returns.
		runtime.LockOSThread()
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		if err := loopbackUp(); err != nil {
			errc <- err
			return
		}
		errc <- nil
		for f := range n.reqs {
			f()
		}
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	return n, nil
}

// loopbackUp sets the IFF_UP flag of the interface lo, which a new network
// namespace has down (ioctl SIOCSIFFLAGS, netdevice(7)).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifreq [40]byte // struct ifreq: the name, then a union whose short is the flags
	copy(ifreq[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifreq))); e != 0 {
		return e
	}
	flags := binary.NativeEndian.Uint16(ifreq[16:])
	binary.NativeEndian.PutUint16(ifreq[16:], flags|syscall.IFF_UP)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifreq))); e != 0 {
		return e
	}
	return nil
}

// do runs f on the namespace's thread.
func (n *scratchNet) do(f func()) {
	ran := make(chan struct{})
	n.reqs <- func() { f(); close(ran) }
	<-ran
}

// close ends the namespace's thread; the namespace goes with its last
// process.
func (n *scratchNet) close() {
	close(n.reqs)
	<-n.done
}

// start starts cmd in the namespace: a process forked from the thread
// inherits its namespace.
func (n *scratchNet) start(cmd *exec.Cmd) (err error) {
	n.do(func() { err = cmd.Start() })
	return err
}

// dial connects to addr in the namespace: a socket belongs to the
// namespace of the thread that made it.
func (n *scratchNet) dial(addr string) (c net.Conn, err error) {
	n.do(func() { c, err = net.Dial("tcp", addr) })
	return c, err
}

// forward listens on 127.0.0.1 outside the namespace and relays every
// connection to port on the namespace's loopback. It returns the address
// to dial; the relay stops at the test's end.
func (n *scratchNet) forward(tb testing.TB, port string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{} // nil once the test ended
	)
	track := func(cs ...net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			if conns == nil {
				c.Close()
				continue
			}
			conns[c] = true
		}
		return conns != nil
	}
	untrack := func(cs ...net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			c.Close()
			delete(conns, c)
		}
	}
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		conns = nil
		mu.Unlock()
		wg.Wait()
	})
	// copyHalf copies one direction and passes its end on (the other side
	// reads EOF), as a half-closed TCP connection does.
	copyHalf := func(dst, src net.Conn, done *sync.WaitGroup) {
		defer done.Done()
		_, _ = io.Copy(dst, src)
		_ = dst.(*net.TCPConn).CloseWrite()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			outer, err := ln.Accept()
			if err != nil {
				return
			}
			inner, err := n.dial(net.JoinHostPort("127.0.0.1", port))
			if err != nil {
				outer.Close()
				continue
			}
			if !track(outer, inner) {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var pair sync.WaitGroup
				pair.Add(2)
				go copyHalf(inner, outer, &pair)
				go copyHalf(outer, inner, &pair)
				pair.Wait()
				untrack(outer, inner)
			}()
		}
	}()
	return ln.Addr().String()
}
