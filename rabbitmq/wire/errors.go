package wire

import "strconv"

// Reply codes (amqp0-9-1.xml constants) with RabbitMQ's names. Codes below
// 500 other than 320 and 402 are soft errors that close a channel; the
// others close the connection (see IsHardError).
const (
	ReplySuccess       = 200 // reply-success: a normal close
	ContentTooLarge    = 311 // content-too-large
	NoRoute            = 312 // no-route: a mandatory message could not be routed
	NoConsumers        = 313 // no-consumers: an immediate message had no consumer
	ConnectionForced   = 320 // connection-forced: an operator closed the connection
	InvalidPath        = 402 // invalid-path: unknown virtual host
	AccessRefused      = 403 // access-refused
	NotFound           = 404 // not-found
	ResourceLocked     = 405 // resource-locked: an exclusive queue of another connection
	PreconditionFailed = 406 // precondition-failed
	FrameError         = 501 // frame-error: a frame that cannot be read
	SyntaxError        = 502 // syntax-error: a field that cannot be decoded or is illegal
	CommandInvalid     = 503 // command-invalid: a method not allowed in this state
	ChannelError       = 504 // channel-error: a channel not correctly opened
	UnexpectedFrame    = 505 // unexpected-frame: a frame out of sequence
	ResourceError      = 506 // resource-error: the server lacks resources
	NotAllowed         = 530 // not-allowed
	NotImplemented     = 540 // not-implemented
	InternalError      = 541 // internal-error
)

// malformedCode is the reply code for arguments, content headers,
// properties and tables that cannot be decoded: 501 FRAME_ERROR, as the
// specification's frame-error ("a malformed frame that the recipient could
// not decode") and RabbitMQ (rabbit_misc:frame_error, "cannot decode") say.
const malformedCode = FrameError

// ReplyName returns RabbitMQ's name of a reply code, such as "NOT_FOUND" for
// 404, or the code in decimal if it is not one of the codes above.
func ReplyName(code uint16) string {
	switch code {
	case ReplySuccess:
		return "REPLY_SUCCESS"
	case ContentTooLarge:
		return "CONTENT_TOO_LARGE"
	case NoRoute:
		return "NO_ROUTE"
	case NoConsumers:
		return "NO_CONSUMERS"
	case ConnectionForced:
		return "CONNECTION_FORCED"
	case InvalidPath:
		return "INVALID_PATH"
	case AccessRefused:
		return "ACCESS_REFUSED"
	case NotFound:
		return "NOT_FOUND"
	case ResourceLocked:
		return "RESOURCE_LOCKED"
	case PreconditionFailed:
		return "PRECONDITION_FAILED"
	case FrameError:
		return "FRAME_ERROR"
	case SyntaxError:
		return "SYNTAX_ERROR"
	case CommandInvalid:
		return "COMMAND_INVALID"
	case ChannelError:
		return "CHANNEL_ERROR"
	case UnexpectedFrame:
		return "UNEXPECTED_FRAME"
	case ResourceError:
		return "RESOURCE_ERROR"
	case NotAllowed:
		return "NOT_ALLOWED"
	case NotImplemented:
		return "NOT_IMPLEMENTED"
	case InternalError:
		return "INTERNAL_ERROR"
	}
	return strconv.Itoa(int(code))
}

// IsHardError reports whether a reply code is a hard error, one that closes
// the whole connection rather than a channel (amqp0-9-1.xml constant
// classes): 320, 402 and every 5xx code.
func IsHardError(code uint16) bool {
	return code == ConnectionForced || code == InvalidPath || code >= 500
}

// ReplyText returns the reply-text RabbitMQ sends with a code: its name, " -
// " and the explanation, cut to 252 octets and "..." when it would pass the
// 255 octets of a short string, as rabbit_binary_generator does.
func ReplyText(code uint16, explanation string) string {
	s := ReplyName(code) + " - " + explanation
	if len(s) > maxShortstr {
		s = s[:maxShortstr-3] + "..."
	}
	return s
}

// Error is a protocol error found by the codec, with the reply code the
// connection (or, for a soft code, the channel) must be closed with.
type Error struct {
	Code uint16
	Text string
}

// Error returns the reply-text for the close: see ReplyText.
func (e *Error) Error() string { return ReplyText(e.Code, e.Text) }

// malformed returns the error for input that cannot be decoded.
func malformed(what, reason string) *Error {
	return &Error{Code: malformedCode, Text: "cannot decode " + what + ": " + reason}
}
