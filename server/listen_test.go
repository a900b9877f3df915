package server

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
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
	err = checkListen(Config{AMQPAddr: free, AMQPSAddr: ":0", CosmosAddr: ":0", ServiceBusAdminAddr: ":0",
		RabbitMQManagementAddr: free, ControlAddr: ":0"})
	var le *ListenError
	if !errors.As(err, &le) || le.Flag != "rabbitmq-management-addr" || !errors.Is(err, syscall.EADDRINUSE) ||
		strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("checkListen: %v", err)
	}
	if err != nil && err.Error() != "cannot listen on "+free+" (RabbitMQ management, --rabbitmq-management-addr): address already in use" {
		t.Errorf("checkListen: %q", err.Error())
	}
}
