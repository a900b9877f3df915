package server

import (
	"fmt"
	"net"
	"strings"

	"github.com/lapse-emulator/lapse/servicebus"
)

// Banner is the block `lapse serve` prints once every listener is bound,
// for a person to read: where the dashboard is, what each protocol's
// clients connect with, with the ports actually bound, the data folder and
// the clock. An address bound to every interface shows as localhost. Call
// it after Run.
func (m *Main) Banner() string {
	if m.Control == nil || m.amqp == nil || m.amqps == nil || m.sbAdmin == nil || m.sbHTTPS == nil || m.management == nil || m.Cosmos == nil {
		return ""
	}
	control := hostPort(m.Control.Addr())
	amqp := hostPort(m.amqp.Addr())
	key := m.CosmosKey()
	data := m.Config.Data
	if data == ":memory:" {
		data = ":memory: (nothing is kept)"
	}
	advance := "lapse clock advance 15m"
	if control != "localhost:8080" {
		advance += " --control-url http://" + control
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nlapse %s is ready (Ctrl-C stops it).\n\n", m.Version)
	row := func(label, value string) { fmt.Fprintf(&b, "  %-13s %s\n", label, value) }
	row("Dashboard", "http://"+control+"/")
	row("Service Bus", serviceBusConnectionString(amqp))
	row("", "administration: http://"+hostPort(m.sbAdmin.Addr())+"/")
	row("", "WebSockets: wss://"+hostPort(m.sbHTTPS.Addr())+servicebus.WebSocketPath)
	row("RabbitMQ", "amqp://guest:guest@"+amqp+"/")
	row("", "management: http://"+hostPort(m.management.Addr())+"/ (user guest, password guest)")
	row("Cosmos DB", "https://"+hostPort(m.Cosmos.Addr())+"/")
	row("", "key: "+key)
	row("", "certificate: http://"+control+"/cert.pem (also AMQPS's, on "+hostPort(m.amqps.Addr())+")")
	row("Data", data)
	row("Clock", string(m.Clock.Mode())+"; move it with: "+advance)
	b.WriteString("\n")
	return b.String()
}

// hostPort is addr as a client dials it: an address bound to every
// interface ([::]:5672) is localhost:5672.
func hostPort(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// serviceBusConnectionString is the connection string of the Service Bus
// SDKs for the AMQP port at hostport: the official emulator's, with the
// port when it is not AMQP's 5672.
func serviceBusConnectionString(hostport string) string {
	if host, port, err := net.SplitHostPort(hostport); err == nil && port == "5672" {
		hostport = host
		if strings.Contains(host, ":") {
			hostport = "[" + host + "]"
		}
	}
	return "Endpoint=sb://" + hostport + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
}
