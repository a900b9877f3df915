package servicebus

import (
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// AMQP error conditions Service Bus uses (servicebus.md §2.8).
const (
	condNotFound         = amqp.Symbol("amqp:not-found")
	condUnauthorized     = amqp.Symbol("amqp:unauthorized-access")
	condNotAllowed       = amqp.Symbol("amqp:not-allowed")
	condInternal         = amqp.Symbol("amqp:internal-error")
	condDecode           = amqp.Symbol("amqp:decode-error")
	condInvalidField     = amqp.Symbol("amqp:invalid-field")
	condNotImplemented   = amqp.Symbol("amqp:not-implemented")
	condResourceLimit    = amqp.Symbol("amqp:resource-limit-exceeded")
	condFramingError     = amqp.Symbol("amqp:connection:framing-error")
	condConnForced       = amqp.Symbol("amqp:connection:forced")
	condDetachForced     = amqp.Symbol("amqp:link:detach-forced")
	condMessageTooLarge  = amqp.Symbol("amqp:link:message-size-exceeded")
	condHandleInUse      = amqp.Symbol("amqp:session:handle-in-use")
	condUnattached       = amqp.Symbol("amqp:session:unattached-handle")
	condWindowViolation  = amqp.Symbol("amqp:session:window-violation")
	condTransferLimit    = amqp.Symbol("amqp:link:transfer-limit-exceeded")
	condLockLost         = amqp.Symbol("com.microsoft:message-lock-lost")
	condArgumentError    = amqp.Symbol("com.microsoft:argument-error")
	condDeadLetter       = amqp.Symbol("com.microsoft:dead-letter")
	condEntityExists     = amqp.Symbol("com.microsoft:entity-already-exists")
	condServerBusy       = amqp.Symbol("com.microsoft:server-busy")
	condSessionCantLock  = amqp.Symbol("com.microsoft:session-cannot-be-locked")
	condPreconditionFail = amqp.Symbol("amqp:precondition-failed")
	condSessionLockLost  = amqp.Symbol("com.microsoft:session-lock-lost")
	condTimeout          = amqp.Symbol("com.microsoft:timeout")
)

// errorTable maps core's error codes to AMQP conditions and the status
// codes of the management and CBS nodes, in one place (docs/architecture.md, conventions).
var errorTable = map[string]struct {
	cond   amqp.Symbol
	status int32
}{
	core.ENOTFOUND:       {condNotFound, 404},
	core.EUNAUTHORIZED:   {condUnauthorized, 401},
	core.ELOCKLOST:       {condLockLost, 410},
	core.ETOOLARGE:       {condMessageTooLarge, 413},
	core.EINVALID:        {condArgumentError, 400},
	core.EPRECONDITION:   {condNotAllowed, 400},
	core.ECONFLICT:       {condEntityExists, 409},
	core.EUNAVAILABLE:    {condServerBusy, 503},
	core.ERESOURCELOCKED: {condSessionCantLock, 410},
	// a session's lock ran out or was released (SS-3); no session to accept
	core.ESESSIONLOCKLOST: {condSessionLockLost, 410},
	core.ENOSESSION:       {condTimeout, 408},
	core.EINTERNAL:        {condInternal, 500},
}

// amqpError turns an error into an AMQP error; internal errors keep their
// text out of it.
func amqpError(err error) *amqp.Error {
	if e, ok := err.(*amqp.Error); ok {
		return e
	}
	code := core.ErrorCode(err)
	m, ok := errorTable[code]
	if !ok || code == core.EINTERNAL {
		return &amqp.Error{Condition: condInternal, Description: "The service was unable to process the request; please retry the operation."}
	}
	return &amqp.Error{Condition: m.cond, Description: core.ErrorMessage(err)}
}

// statusOf returns the management status code and description of an error.
func statusOf(err error) (int32, string) {
	code := core.ErrorCode(err)
	m, ok := errorTable[code]
	if !ok || code == core.EINTERNAL {
		return 500, "The service was unable to process the request; please retry the operation."
	}
	return m.status, core.ErrorMessage(err)
}

func errEntityGone(path string) *amqp.Error {
	return &amqp.Error{Condition: condNotFound, Description: "The messaging entity '" + path + "' could not be found."}
}

// tracked ends an error description the way the service ends its own: a
// tracking id, the system tracker naming the namespace and the entity
// node n belongs to, and the time. A queue is "<namespace>:Queue:<name>",
// a subscription "<namespace>:Topic:<topic>|<subscription>".
func (s *Server) tracked(desc string, n *node) string {
	tracker := s.cfg.Namespace
	switch {
	case n == nil:
	case n.sub != nil:
		tracker += ":Topic:" + n.sub.topic.name + "|" + n.sub.name
	default:
		tracker += ":Queue:" + n.queue.name
	}
	u := uuid.New()
	return fmt.Sprintf("%s TrackingId:%s_G0, SystemTracker:%s, Timestamp:%s",
		desc, hex.EncodeToString(u[:]), tracker, s.now().UTC().Format("2006-01-02T15:04:05"))
}

// errNonSessionReceiver is the service's refusal of a receiver without a
// session filter on an entity that requires sessions.
func (s *Server) errNonSessionReceiver(n *node) *amqp.Error {
	return &amqp.Error{Condition: condNotAllowed,
		Description: s.tracked("It is not possible for an entity that requires sessions to create a non-sessionful message receiver.", n)}
}

// errSessionReceiverOnPlainEntity is the service's refusal of a session
// receiver on an entity that does not require sessions.
func (s *Server) errSessionReceiverOnPlainEntity(n *node) *amqp.Error {
	return &amqp.Error{Condition: condNotAllowed,
		Description: s.tracked("A sessionful message receiver cannot be created on an entity that does not require sessions. Ensure RequiresSession is set to true when creating a Queue or Subscription to enable sessionful behavior.", n)}
}
