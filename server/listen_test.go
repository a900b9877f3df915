package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// issue 15.5: two listeners given one address: the second is reported.
func TestOneAddressForTwoListenersIsReported(t *testing.T) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	free := ":" + port
	p, err := listen(Config{AMQPAddr: free, AMQPSAddr: ":0", CosmosAddr: ":0", ServiceBusAdminAddr: ":0",
		RabbitMQManagementAddr: free, ControlAddr: ":0"})
	var le *ListenError
	if !errors.As(err, &le) || le.Flag != "rabbitmq-management-addr" || !errors.Is(err, syscall.EADDRINUSE) ||
		strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("listen: %v", err)
	}
	if err != nil && err.Error() != "cannot listen on "+free+" (RabbitMQ management, --rabbitmq-management-addr): address already in use" {
		t.Errorf("listen: %q", err.Error())
	}
	p.close()
	// The AMQP listener, bound before the failure, was closed with it.
	again, err := net.Listen("tcp", free)
	if err != nil {
		t.Fatalf("the port of a failed start is still bound: %v", err)
	}
	again.Close()
}

// issue 25.7: lapse binds each port once and keeps it until its server
// serves it: while lapse starts (here when it first reads the wall clock,
// after binding, while it opens the data folder and makes its
// certificate), another process cannot take a port of lapse.
func TestPortsAreHeldFromTheStart(t *testing.T) {
	flags := []string{"--amqp-addr", "--amqps-addr", "--cosmos-addr", "--servicebus-admin-addr",
		"--servicebus-websocket-addr", "--rabbitmq-management-addr", "--control-addr"}
	var args []string
	for _, f := range flags {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, f, ln.Addr().String())
		ln.Close()
	}
	var once sync.Once
	var taken []string
	m := NewMain()
	m.Stderr = io.Discard
	m.Wall = func() time.Time {
		once.Do(func() {
			for i := 1; i < len(args); i += 2 {
				ln, err := net.Listen("tcp", args[i])
				if err == nil {
					taken = append(taken, args[i-1]+" "+args[i])
					ln.Close()
				} else if !errors.Is(err, syscall.EADDRINUSE) {
					t.Errorf("binding %s while lapse starts: %v, want address already in use", args[i], err)
				}
			}
		})
		return time.Now()
	}
	if err := m.ParseFlags(append([]string{"--data", filepath.Join(t.TempDir(), "data")}, args...), noEnv); err != nil {
		t.Fatal(err)
	}
	m.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if len(taken) > 0 {
		t.Errorf("another process could bind the ports of a starting lapse: %s", strings.Join(taken, ", "))
	}
	if got, want := m.Control.Addr().String(), args[len(args)-1]; got != want {
		t.Errorf("control API on %s, want %s", got, want)
	}
}
