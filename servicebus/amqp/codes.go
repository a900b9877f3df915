package amqp

// Format codes of the primitive type encodings (§1.6).
const (
	codeDescribed  = 0x00
	codeNull       = 0x40
	codeTrue       = 0x41
	codeFalse      = 0x42
	codeBool       = 0x56
	codeUbyte      = 0x50
	codeUshort     = 0x60
	codeUint       = 0x70
	codeSmallUint  = 0x52
	codeUint0      = 0x43
	codeUlong      = 0x80
	codeSmallUlong = 0x53
	codeUlong0     = 0x44
	codeByte       = 0x51
	codeShort      = 0x61
	codeInt        = 0x71
	codeSmallInt   = 0x54
	codeLong       = 0x81
	codeSmallLong  = 0x55
	codeFloat      = 0x72
	codeDouble     = 0x82
	codeDecimal32  = 0x74
	codeDecimal64  = 0x84
	codeDecimal128 = 0x94
	codeChar       = 0x73
	codeTimestamp  = 0x83
	codeUUID       = 0x98
	codeVbin8      = 0xa0
	codeVbin32     = 0xb0
	codeStr8       = 0xa1
	codeStr32      = 0xb1
	codeSym8       = 0xa3
	codeSym32      = 0xb3
	codeList0      = 0x45
	codeList8      = 0xc0
	codeList32     = 0xd0
	codeMap8       = 0xc1
	codeMap32      = 0xd1
	codeArray8     = 0xe0
	codeArray32    = 0xf0
)

// Descriptor codes (domain 0x00000000) of the composite types the codec
// decodes into structs.
const (
	descOpen               uint64 = 0x10 // §2.7.1
	descBegin              uint64 = 0x11 // §2.7.2
	descAttach             uint64 = 0x12 // §2.7.3
	descFlow               uint64 = 0x13 // §2.7.4
	descTransfer           uint64 = 0x14 // §2.7.5
	descDisposition        uint64 = 0x15 // §2.7.6
	descDetach             uint64 = 0x16 // §2.7.7
	descEnd                uint64 = 0x17 // §2.7.8
	descClose              uint64 = 0x18 // §2.7.9
	descError              uint64 = 0x1d // §2.8.14
	descReceived           uint64 = 0x23 // §3.4.1
	descAccepted           uint64 = 0x24 // §3.4.2
	descRejected           uint64 = 0x25 // §3.4.3
	descReleased           uint64 = 0x26 // §3.4.4
	descModified           uint64 = 0x27 // §3.4.5
	descSource             uint64 = 0x28 // §3.5.3
	descTarget             uint64 = 0x29 // §3.5.4
	descCoordinator        uint64 = 0x30 // §4.5.1
	descDeclare            uint64 = 0x31 // §4.5.2
	descDischarge          uint64 = 0x32 // §4.5.3
	descDeclared           uint64 = 0x33 // §4.5.4
	descTransactionalState uint64 = 0x34 // §4.5.5
	descSASLMechanisms     uint64 = 0x40 // §5.3.3.1
	descSASLInit           uint64 = 0x41 // §5.3.3.2
	descSASLChallenge      uint64 = 0x42 // §5.3.3.3
	descSASLResponse       uint64 = 0x43 // §5.3.3.4
	descSASLOutcome        uint64 = 0x44 // §5.3.3.5
	descHeader             uint64 = 0x70 // §3.2.1
	descDeliveryAnnots     uint64 = 0x71 // §3.2.2
	descMessageAnnots      uint64 = 0x72 // §3.2.3
	descProperties         uint64 = 0x73 // §3.2.4
	descApplicationProp    uint64 = 0x74 // §3.2.5
	descData               uint64 = 0x75 // §3.2.6
	descAMQPSequence       uint64 = 0x76 // §3.2.7
	descAMQPValue          uint64 = 0x77 // §3.2.8
	descFooter             uint64 = 0x78 // §3.2.9
)

// symbolicDescriptor maps the symbolic descriptor of a known composite type
// to its numeric code; ok is false for a name the codec does not know.
func symbolicDescriptor(s string) (code uint64, ok bool) {
	switch s {
	case "amqp:open:list":
		return descOpen, true
	case "amqp:begin:list":
		return descBegin, true
	case "amqp:attach:list":
		return descAttach, true
	case "amqp:flow:list":
		return descFlow, true
	case "amqp:transfer:list":
		return descTransfer, true
	case "amqp:disposition:list":
		return descDisposition, true
	case "amqp:detach:list":
		return descDetach, true
	case "amqp:end:list":
		return descEnd, true
	case "amqp:close:list":
		return descClose, true
	case "amqp:error:list":
		return descError, true
	case "amqp:received:list":
		return descReceived, true
	case "amqp:accepted:list":
		return descAccepted, true
	case "amqp:rejected:list":
		return descRejected, true
	case "amqp:released:list":
		return descReleased, true
	case "amqp:modified:list":
		return descModified, true
	case "amqp:source:list":
		return descSource, true
	case "amqp:target:list":
		return descTarget, true
	case "amqp:coordinator:list":
		return descCoordinator, true
	case "amqp:declare:list":
		return descDeclare, true
	case "amqp:discharge:list":
		return descDischarge, true
	case "amqp:declared:list":
		return descDeclared, true
	case "amqp:transactional-state:list":
		return descTransactionalState, true
	case "amqp:sasl-mechanisms:list":
		return descSASLMechanisms, true
	case "amqp:sasl-init:list":
		return descSASLInit, true
	case "amqp:sasl-challenge:list":
		return descSASLChallenge, true
	case "amqp:sasl-response:list":
		return descSASLResponse, true
	case "amqp:sasl-outcome:list":
		return descSASLOutcome, true
	case "amqp:header:list":
		return descHeader, true
	case "amqp:delivery-annotations:map":
		return descDeliveryAnnots, true
	case "amqp:message-annotations:map":
		return descMessageAnnots, true
	case "amqp:properties:list":
		return descProperties, true
	case "amqp:application-properties:map":
		return descApplicationProp, true
	case "amqp:data:binary":
		return descData, true
	case "amqp:amqp-sequence:list":
		return descAMQPSequence, true
	case "amqp:amqp-value:*":
		return descAMQPValue, true
	case "amqp:footer:map":
		return descFooter, true
	}
	return 0, false
}
