//go:build reliability && linux

package reliability

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	amqp "github.com/rabbitmq/amqp091-go"
)

// issue 16, the standing test: lapse at its limit of open files refuses
// what it cannot take and goes on accepting once files are free again, on
// the AMQP port (RabbitMQ and Service Bus) and the Cosmos port alike.
func TestConnectionsPastTheFileLimitAreAcceptedOnceFilesFree(t *testing.T) {
	l := Start(t, "")
	pid := l.Pid()
	old := connsSetFileLimit(t, pid, uint64(connsOpenFiles(t, pid)+20))
	restored := false
	restore := func() {
		if !restored {
			connsSetFileLimit(t, pid, old.Cur)
			restored = true
		}
	}
	t.Cleanup(restore)

	// More connections than lapse has files left, on both ports.
	var raw []net.Conn
	defer func() {
		for _, c := range raw {
			c.Close()
		}
	}()
	for _, addr := range []string{l.Addrs["amqp"], l.Addrs["cosmos"]} {
		for range 40 {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, c)
		}
	}
	limit := connsProcessFileLimit(t, pid)
	connsPoll(t, 30*time.Second, func() error {
		if n := connsOpenFiles(t, pid); uint64(n) < limit {
			return fmt.Errorf("lapse has %d files open, its limit is %d", n, limit)
		}
		return nil
	})
	t.Logf("lapse at its limit of %d open files with %d raw connections waiting", limit, len(raw))
	for _, c := range raw {
		c.Close()
	}
	raw = nil
	restore()

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	conn, err := amqp.DialConfig(l.RabbitMQURL(), amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		t.Fatalf("AMQP 0-9-1 connection once files are free: %v", err)
	}
	conn.Close()
	tr := connsCosmosTransport(l.TLS(), &atomic.Int64{})
	defer tr.CloseIdleConnections()
	c, err := l.CosmosClient(CosmosKey, tr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "limit"}, nil); err != nil {
		t.Fatalf("Cosmos create database once files are free: %v", err)
	}
	t.Logf("an AMQP 0-9-1 connection and a Cosmos request succeed %v after files are free", time.Since(start).Round(time.Millisecond))
	l.Alive()
}

// connsOpenFiles is how many files process pid has open.
func connsOpenFiles(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// connsSetFileLimit sets process pid's soft limit of open files to cur
// (prlimit(2)) and returns the limits it had.
func connsSetFileLimit(t *testing.T, pid int, cur uint64) syscall.Rlimit {
	t.Helper()
	var old syscall.Rlimit
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&old)), 0, 0); e != 0 {
		t.Fatalf("prlimit: %v", e)
	}
	lim := syscall.Rlimit{Cur: cur, Max: old.Max}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		t.Fatalf("prlimit: %v", e)
	}
	return old
}
