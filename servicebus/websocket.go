package servicebus

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// WebSocketPath is where the service serves AMQP over WebSockets on its
// host name: the SDKs' WebSocket transport (TransportType.AmqpWebSockets,
// amqpwss) connects to wss://<namespace>:443/$servicebus/websocket.
const WebSocketPath = "/$servicebus/websocket"

// webSocketProtocols are the WebSocket subprotocols an AMQP connection
// over a WebSocket may ask for, in the order lapse prefers them:
// "AMQPWSB10", which the .NET, Java, JavaScript and Python SDKs send, and
// "amqp", the name the OASIS AMQP WebSocket Binding registered, which
// azservicebus's own tests against the service send.
var webSocketProtocols = []string{"AMQPWSB10", "amqp"}

// webSocketHeaderTimeout bounds the wait for the AMQP protocol header
// once the WebSocket is open, as the AMQP ports bound it on a TCP
// connection.
const webSocketHeaderTimeout = 10 * time.Second

// WebSocketHandler returns the handler of AMQP over WebSockets at
// WebSocketPath: it upgrades the request to a WebSocket whose binary
// messages carry the AMQP bytes and serves that as ServeConn serves a TCP
// connection (SASL, CBS, a key of another world all the same). A request
// elsewhere is 404; an upgrade that asks for none of the AMQP
// subprotocols is 400, since its client would not be speaking AMQP.
func (s *Server) WebSocketHandler() http.Handler {
	return http.HandlerFunc(s.serveWebSocket)
}

func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != WebSocketPath {
		http.NotFound(w, r)
		return
	}
	if isUpgrade(r) && !offersProtocol(r, webSocketProtocols) {
		http.Error(w, "AMQP over WebSockets needs the subprotocol AMQPWSB10 (or amqp)", http.StatusBadRequest)
		return
	}
	// From the upgrade until ServeConn has the connection, the server
	// counts the handler as one of its connections, so that Close ends
	// the wait for the header and waits for the handler.
	if !s.enter() {
		http.Error(w, "the server is closing", http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: webSocketProtocols,
		// The connection is authorized by its SAS tokens, as every
		// AMQP connection is (CBS), not by the page it comes from:
		// the JavaScript SDK in a browser connects from any origin.
		InsecureSkipVerify: true,
	})
	if err != nil {
		// Accept has answered the request already.
		s.log().Debug("WebSocket upgrade refused", "remote", r.RemoteAddr, "err", err)
		s.wg.Done()
		return
	}
	// NetConn lifts the WebSocket's limit on a message's size: a message
	// is streamed into the AMQP reader, which bounds every frame by
	// lapse's max-frame-size, and a transfer of 256 KB is one message.
	// The connection outlives the request's context; it ends when the
	// AMQP connection closes it, or when the server closes before
	// ServeConn has it.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	nc := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	var h [8]byte
	nc.SetReadDeadline(time.Now().Add(webSocketHeaderTimeout))
	_, err = io.ReadFull(nc, h[:])
	if err != nil {
		nc.Close()
		s.wg.Done()
		return
	}
	nc.SetReadDeadline(time.Time{})
	s.wg.Done()
	// ServeConn counts the connection itself, or closes it when the
	// server has closed meanwhile.
	s.ServeConn(nc, h)
}

// enter counts a goroutine that is about to serve a connection as one of
// the server's, unless the server is closed; the caller calls s.wg.Done
// when it is done.
func (s *Server) enter() bool {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// isUpgrade says whether r asks to become a WebSocket.
func isUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

// offersProtocol says whether r's Sec-WebSocket-Protocol lists one of
// protocols.
func offersProtocol(r *http.Request, protocols []string) bool {
	for _, p := range protocols {
		if headerHasToken(r.Header, "Sec-WebSocket-Protocol", p) {
			return true
		}
	}
	return false
}

// headerHasToken says whether one of h's values of key, comma-separated,
// is token, ignoring case.
func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
